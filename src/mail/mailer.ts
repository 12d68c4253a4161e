import nodemailer from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends one message or throws; the caller decides what a failure means. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * SMTP through nodemailer. The URL may carry credentials: it is handed to the transport only, and
 * nodemailer's own logging stays off so neither it nor a message body (an approval code) is logged.
 */
export function createSmtpMailer(opts: { smtpUrl: string; from: string; timeoutMs?: number }): Mailer {
  const timeout = opts.timeoutMs ?? 10_000;
  const transport = nodemailer.createTransport(opts.smtpUrl, {
    logger: false,
    debug: false,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  } as nodemailer.TransportOptions);
  return {
    async send(message) {
      await transport.sendMail({ from: opts.from, to: message.to, subject: message.subject, text: message.text });
    },
  };
}
