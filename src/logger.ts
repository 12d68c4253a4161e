import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Paths that may carry secrets. pino replaces them before a line is written, so a secret can't reach
 * a log even when a caller logs a whole object by mistake.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-svc-payment-secret"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-svc-payment-secret"]',
  '["x-svc-payment-secret"]',
  '*["x-svc-payment-secret"]',
  '*.headers["x-svc-payment-secret"]',
  '*.headers.authorization',
  'authorization',
  'appSecret',
  'clientSecret',
  'paymentSecret',
  'signingSecret',
  'secret',
  'password',
  'mnemonic',
  'privateKey',
  'token',
  'accessToken',
  '*.appSecret',
  '*.clientSecret',
  '*.paymentSecret',
  '*.signingSecret',
  '*.secret',
  '*.password',
  '*.mnemonic',
  '*.privateKey',
  '*.accessToken',
  '*.authorization',
  '*.*.clientSecret',
  '*.*.appSecret',
  '*.*.signingSecret',
  // Off-ramp: the provider callbacks' HMAC key and bank account numbers.
  'callbackSecret',
  '*.callbackSecret',
  'accountNumber',
  '*.accountNumber',
  '*.*.accountNumber',
];

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'partner-payments' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
