import { readFileSync } from 'node:fs';

/**
 * The settings that hold a secret (a key, a token, or a URL that may carry a password). Each may be
 * given as `<NAME>_FILE` instead, naming a file that holds it (a mounted secret), so the value stays
 * out of the process environment, `docker inspect` and crash dumps of it. The custody seed has its
 * own pair (CUSTODY_MNEMONIC_FILE, read by src/custody/supply.ts where the worker loads it).
 */
export const SECRET_SETTINGS = [
  'SERVICE_SECRET',
  'SERVICE_SECRET_PREVIOUS',
  'METRICS_TOKEN',
  'SMTP_URL',
  'OPERATOR_OIDC_CLIENT_SECRET',
  'OFFRAMP_CALLBACK_SECRET',
  'DATABASE_URL',
  'API_DATABASE_URL',
  'WORKER_DATABASE_URL',
] as const;

export type ReadSecretFile = (file: string) => string;

/**
 * The environment with every `<NAME>_FILE` of SECRET_SETTINGS read into `<NAME>` (the file's text,
 * trimmed), and the problems found: both forms set, a file that can't be read, or an empty one.
 * The `_FILE` names are left out of the answer. An empty value counts as unset, as elsewhere.
 */
export function resolveSecretFiles(
  env: NodeJS.ProcessEnv,
  read: ReadSecretFile = (file) => readFileSync(file, 'utf8'),
): { env: NodeJS.ProcessEnv; problems: string[] } {
  const resolved: NodeJS.ProcessEnv = { ...env };
  const problems: string[] = [];
  for (const name of SECRET_SETTINGS) {
    const fileSetting = `${name}_FILE`;
    const file = env[fileSetting]?.trim();
    delete resolved[fileSetting];
    if (!file) continue;
    if (env[name]?.trim()) {
      problems.push(`${fileSetting}: set ${name} or ${fileSetting}, not both`);
      continue;
    }
    let text: string;
    try {
      text = read(file).trim();
    } catch (err) {
      // The code only (ENOENT, EACCES): never the file's content.
      problems.push(`${fileSetting}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      continue;
    }
    if (!text) problems.push(`${fileSetting}: ${file} is empty`);
    else resolved[name] = text;
  }
  return { env: resolved, problems };
}
