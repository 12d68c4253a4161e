// The hosted checkout's only script (served from /checkout/assets/, the CSP allows nothing else):
// live status by polling GET /checkout/{id}/status every 2 s, the countdown, the copy buttons, the
// redirect to returnUrl on success, and the Vault option when a checkout session holds a payer.
'use strict';

(function () {
  var main = document.querySelector('main[data-payment-id]');
  if (!main) return;
  var base = '/checkout/' + encodeURIComponent(main.getAttribute('data-payment-id'));
  var POLL_MS = 2000;
  var REDIRECT_SECONDS = 3;
  var FINAL = { succeeded: true, expired: true, cancelled: true, failed: true };
  var expiresAt = Date.parse(main.getAttribute('data-expires-at'));
  var phase = main.getAttribute('data-phase');
  var etag = null;
  var redirecting = false;
  var vault = null;

  function field(name) {
    return main.querySelector('[data-field="' + name + '"]');
  }
  function section(name) {
    return main.querySelector('[data-section="' + name + '"]');
  }
  function announce(text) {
    var el = field('announce');
    el.textContent = '';
    // A fresh text node each time, so a screen reader reads a repeated message again.
    window.setTimeout(function () {
      el.textContent = text;
    }, 50);
  }

  // --- copy buttons: the exact text of their field ---------------------------------------------
  main.addEventListener('click', function (event) {
    var button = event.target.closest('button[data-copy]');
    if (!button) return;
    var input = document.getElementById(button.getAttribute('data-copy'));
    var label = button.textContent;
    navigator.clipboard.writeText(input.value).then(
      function () {
        button.textContent = 'Copied';
        announce('Copied to the clipboard');
        window.setTimeout(function () {
          button.textContent = label;
        }, 2000);
      },
      function () {
        input.focus();
        input.select();
        announce('Copying is blocked here: the text is selected, copy it by hand');
      },
    );
  });

  // --- countdown --------------------------------------------------------------------------------
  function pad(n) {
    return n < 10 ? '0' + n : String(n);
  }
  function tick() {
    var left = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
    var h = Math.floor(left / 3600);
    var m = Math.floor((left % 3600) / 60);
    var text = (h > 0 ? h + ':' + pad(m) : String(m)) + ':' + pad(left % 60);
    var el = field('countdown');
    if (el.textContent !== text) el.textContent = text;
    // At the deadline the service shows the Payment expired (unless funds are confirming): ask now.
    if (left === 0 && !FINAL[phase]) poll();
  }

  // --- live status --------------------------------------------------------------------------------
  function apply(s) {
    phase = s.phase;
    main.setAttribute('data-phase', s.phase);
    main.querySelector('.status').setAttribute('data-phase', s.phase);
    if (field('title').textContent !== s.title) field('title').textContent = s.title;
    if (field('detail').textContent !== s.detail) field('detail').textContent = s.detail;
    var pay = section('payable');
    if (s.payable) {
      field('address').value = s.payable.address;
      field('payable-amount').value = s.payable.amount;
      var qr = field('qr');
      var src = base + '/qr.svg?amountAtomic=' + encodeURIComponent(s.payable.amountAtomic);
      if (qr.getAttribute('src') !== src) qr.setAttribute('src', src);
      pay.hidden = false;
    } else {
      pay.hidden = true;
    }
    applyConfirmations(s.confirmations);
    if (FINAL[s.phase] || s.phase === 'accepted') section('vault').hidden = true;
    if (s.phase === 'succeeded' && s.returnUrl) redirect(s.returnUrl);
  }

  // The payer's transfers' depth: "n of m confirmations" (src/http/checkout/page.ts renders the same).
  var confirming = false;
  function applyConfirmations(c) {
    var box = section('confirmations');
    confirming = Boolean(c && !c.finalized);
    if (!c) {
      box.hidden = true;
      return;
    }
    var bar = field('confirmations-bar');
    var text = c.confirmations + ' of ' + c.confirmationsRequired + ' confirmations';
    bar.max = c.confirmationsRequired;
    bar.value = Math.min(c.confirmations, c.confirmationsRequired);
    bar.textContent = text;
    if (field('confirmations-text').textContent !== text) field('confirmations-text').textContent = text;
    box.hidden = false;
  }

  function redirect(url) {
    if (redirecting) return;
    var target;
    try {
      target = new URL(url);
    } catch {
      return;
    }
    if (target.protocol !== 'https:' && target.protocol !== 'http:') return;
    redirecting = true;
    var left = REDIRECT_SECONDS;
    var el = field('redirect');
    el.hidden = false;
    function step() {
      el.textContent = 'Returning you to ' + target.host + ' in ' + left + ' s…';
      if (left === 0) {
        window.location.assign(target.href);
        return;
      }
      left -= 1;
      window.setTimeout(step, 1000);
    }
    step();
  }

  var polling = false;
  function poll() {
    if (polling) return Promise.resolve();
    polling = true;
    var headers = { accept: 'application/json' };
    if (etag) headers['if-none-match'] = etag;
    return fetch(base + '/status', { headers: headers, cache: 'no-store', credentials: 'same-origin' })
      .then(function (res) {
        if (res.status !== 200) return null;
        etag = res.headers.get('etag');
        return res.json();
      })
      .then(function (s) {
        if (s) apply(s);
      })
      .catch(function () {
        /* offline for a moment: the next poll tries again */
      })
      .then(function () {
        polling = false;
      });
  }
  function loop() {
    poll().then(function () {
      // A final Payment whose transfers are still confirming keeps its bar counting.
      if (!FINAL[phase] || confirming) window.setTimeout(loop, POLL_MS);
    });
  }

  // --- the Vault option (only with a checkout session: the cookie is sent to same-origin fetches) --
  function showVault(v) {
    vault = v;
    var box = section('vault');
    var button = box.querySelector('[data-action="vault-pay"]');
    var text = field('vault-text');
    if (v.state === 'none' || FINAL[phase] || phase === 'accepted') {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    button.hidden = v.state !== 'available';
    button.disabled = v.state !== 'available';
    text.textContent =
      v.state === 'available'
        ? 'Your vault can pay this amount. Paying from it sends exactly ' + field('amount').textContent + ' to this request.'
        : v.state === 'processing'
          ? 'Your vault payment is on its way.'
          : 'Paid from your vault.';
  }
  function loadVault() {
    fetch(base + '/vault', { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' })
      .then(function (res) {
        return res.status === 200 ? res.json() : null;
      })
      .then(function (v) {
        if (v) showVault(v);
      })
      .catch(function () {
        /* no session or offline: no Vault option */
      });
  }
  section('vault').addEventListener('click', function (event) {
    var button = event.target.closest('button[data-action="vault-pay"]');
    if (!button || !vault) return;
    button.disabled = true;
    field('vault-text').textContent = 'Authorizing…';
    fetch(base + '/vault/authorize', {
      method: 'POST',
      headers: { accept: 'application/json', 'x-csrf-token': vault.csrfToken },
      cache: 'no-store',
      credentials: 'same-origin',
    })
      .then(function (res) {
        return res.json().then(function (body) {
          if (res.status !== 200) throw new Error((body.error && body.error.message) || 'The vault payment was refused');
          return body;
        });
      })
      .then(function (v) {
        showVault(v);
        announce('Vault payment authorized');
        poll();
      })
      .catch(function (err) {
        field('vault-text').textContent = err.message;
        button.disabled = false;
      });
  });

  tick();
  window.setInterval(tick, 1000);
  if (phase === 'succeeded') {
    var link = field('return-link');
    if (link) redirect(link.getAttribute('href'));
  }
  // A bar on the page may still count up after the Payment is final: one poll tells.
  if (!FINAL[phase] || !section('confirmations').hidden) window.setTimeout(loop, POLL_MS);
  loadVault();
})();
