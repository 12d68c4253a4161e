// The partner dashboard's only script (served from /dashboard/assets/ under the page's nonce; the CSP
// allows nothing else): a resource page's finality bars, asked again every few seconds while they can
// still move (src/http/dashboard/live-finality.ts words them and says when they can), as the hosted
// checkout's status poll does. It stops once nothing can move, after a long while with nothing
// changed, or when the session has ended, and says so; a button pauses and resumes it.
'use strict';

(function () {
  var box = document.querySelector('[data-live-finality]');
  if (!box) return;
  var url = box.getAttribute('data-live-finality');
  var POLL_MS = Number(box.getAttribute('data-poll-ms')) || 2000;
  var IDLE_STOP_MS = Number(box.getAttribute('data-idle-stop-ms')) || 600000;
  var list = box.querySelector('ul.finality');
  var status = box.querySelector('[data-field="finality-status"]');
  var controls = box.querySelector('.live-controls');
  var pause = controls.querySelector('button[data-action="pause"]');
  var timer = null;
  var asking = false;
  var state = 'on';
  var changedAt = Date.now();

  function say(text) {
    status.textContent = text;
  }
  function setState(s) {
    state = s;
    box.setAttribute('data-polling', s);
  }

  // --- the bars: updated in place while the same transactions are listed, else listed anew --------
  function fill(li, bar) {
    var progress = li.querySelector('progress');
    progress.max = bar.confirmationsRequired;
    progress.value = Math.min(bar.confirmations, bar.confirmationsRequired);
    progress.textContent = bar.confirmations + ' of ' + bar.confirmationsRequired;
    var text = li.querySelector('[data-field="confirmations"]');
    if (text.textContent !== bar.text) text.textContent = bar.text;
    li.setAttribute('data-finalized', String(bar.finalized));
  }
  // The same markup as the server's (src/http/dashboard/dashboard-views.ts, finalitySection).
  function row(bar) {
    var li = document.createElement('li');
    li.setAttribute('data-tx', bar.transactionHash);
    li.appendChild(document.createTextNode(bar.label + ' '));
    var hash = document.createElement('span');
    hash.className = 'mono';
    hash.textContent = bar.transactionHash;
    li.appendChild(hash);
    li.appendChild(document.createElement('br'));
    var progress = document.createElement('progress');
    progress.setAttribute('aria-label', bar.label + ' confirmations');
    li.appendChild(progress);
    li.appendChild(document.createTextNode(' '));
    var text = document.createElement('span');
    text.setAttribute('data-field', 'confirmations');
    li.appendChild(text);
    fill(li, bar);
    return li;
  }
  // What the bars show, as one text: the page as served first, then each answer.
  function shown() {
    var items = list.querySelectorAll('li[data-tx]');
    var parts = [];
    for (var i = 0; i < items.length; i += 1) {
      parts.push(items[i].getAttribute('data-tx') + ' ' + items[i].querySelector('[data-field="confirmations"]').textContent);
    }
    return parts.join('|');
  }
  var lastShown = shown();

  function apply(view) {
    var seen = view.bars
      .map(function (bar) {
        return bar.transactionHash + ' ' + bar.text;
      })
      .join('|');
    if (seen !== lastShown) changedAt = Date.now();
    lastShown = seen;
    var items = list.querySelectorAll('li[data-tx]');
    var wasFinal = {};
    var same = items.length === view.bars.length;
    for (var i = 0; i < items.length; i += 1) {
      var tx = items[i].getAttribute('data-tx');
      wasFinal[tx] = items[i].getAttribute('data-finalized') === 'true';
      if (same && view.bars[i].transactionHash !== tx) same = false;
    }
    if (same) {
      for (var j = 0; j < items.length; j += 1) fill(items[j], view.bars[j]);
    } else {
      while (list.firstChild) list.removeChild(list.firstChild);
      view.bars.forEach(function (bar) {
        list.appendChild(row(bar));
      });
    }
    var nowFinal = view.bars.filter(function (bar) {
      return bar.finalized && wasFinal[bar.transactionHash] === false;
    });
    if (!view.live) stop('done', 'Every transaction is final: live updates stopped.');
    else if (nowFinal.length > 0)
      say(
        nowFinal
          .map(function (bar) {
            return bar.label + ' is final.';
          })
          .join(' '),
      );
  }

  // --- asking again ----------------------------------------------------------------------------------
  function stop(how, text) {
    window.clearTimeout(timer);
    timer = null;
    setState(how);
    controls.hidden = true;
    say(text);
  }
  function schedule() {
    if (state !== 'on' || asking) return;
    if (Date.now() - changedAt >= IDLE_STOP_MS) {
      var minutes = Math.round(IDLE_STOP_MS / 60000);
      stop('stopped', 'Live updates stopped: nothing changed for ' + minutes + ' minutes. Reload the page to look again.');
      return;
    }
    timer = window.setTimeout(ask, POLL_MS);
  }
  function ask() {
    timer = null;
    if (state !== 'on') return;
    asking = true;
    // A redirect is the sign-in page (the session has ended): not followed, it ends the updates.
    fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin', redirect: 'manual' })
      .then(function (res) {
        if (res.type === 'opaqueredirect' || (res.status >= 400 && res.status < 500)) {
          stop('stopped', 'Live updates stopped: reload the page (you may need to sign in again).');
          return null;
        }
        // A moment's trouble on our side: the next round asks again.
        return res.status === 200 ? res.json() : null;
      })
      .then(function (view) {
        if (view && state === 'on') apply(view);
      })
      .catch(function () {
        /* offline for a moment: the next round asks again */
      })
      .then(function () {
        asking = false;
        schedule();
      });
  }

  pause.addEventListener('click', function () {
    if (state === 'on') {
      window.clearTimeout(timer);
      timer = null;
      setState('paused');
      pause.textContent = 'Resume live updates';
      say('Live updates paused.');
    } else if (state === 'paused') {
      setState('on');
      changedAt = Date.now();
      pause.textContent = 'Pause live updates';
      say('Live updates resumed.');
      if (!asking) ask();
    }
  });

  controls.hidden = false;
  setState('on');
  schedule();
})();
