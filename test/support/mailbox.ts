import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { until } from './until';

export interface ReceivedMail {
  to: string[];
  raw: string;
  /** The body, quoted-printable soft breaks and escapes undone. */
  text: string;
}

/** An in-process SMTP server: the service's real mail path (nodemailer over SMTP) delivers here. */
export interface Mailbox {
  url: string;
  received: ReceivedMail[];
  /** The newest mail to `to` arriving after `since` mails were in the box; waits up to 5 s. */
  next(to: string, since: number): Promise<ReceivedMail>;
  /** The 6-digit code of a vault approval mail. */
  codeOf(mail: ReceivedMail): string;
  /** While set, every message is refused (a 5xx), as a broken relay would. */
  failing: boolean;
  close(): Promise<void>;
}

function decodeQuotedPrintable(body: string): string {
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export async function startMailbox(): Promise<Mailbox> {
  const received: ReceivedMail[] = [];
  const box: Mailbox = {
    url: '',
    received,
    failing: false,
    next: (to, since) =>
      until(
        (saw) => {
          saw(`${received.length} mails, to ${received.map((m) => m.to.join(',')).join('; ')}`);
          return received
            .slice(since)
            .filter((m) => m.to.includes(to.toLowerCase()))
            .pop();
        },
        `a mail to ${to}`,
        5000,
      ),
    codeOf(mail) {
      const code = /\bis (\d{6})\b/.exec(mail.text)?.[1];
      if (!code) throw new Error('no code in the mail');
      return code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (box.failing) return callback(Object.assign(new Error('mailbox refuses mail'), { responseCode: 554 }));
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
        received.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw, text: decodeQuotedPrintable(body) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  box.url = `smtp://127.0.0.1:${port}`;
  return box;
}
