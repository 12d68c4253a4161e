import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { english } from 'viem/accounts';

/**
 * A BIP-39 mnemonic that refuses to be printed: JSON, string conversion and util.inspect (hence
 * console.log and pino) all show a placeholder, so logging a config object by mistake can't leak it.
 * Only `reveal()` returns the words.
 */
export class Mnemonic {
  readonly #phrase: string;

  constructor(phrase: string) {
    const normalized = phrase.normalize('NFKD').trim().split(/\s+/).join(' ');
    assertWellFormed(normalized);
    this.#phrase = normalized;
  }

  reveal(): string {
    return this.#phrase;
  }

  toJSON(): string {
    return '[redacted mnemonic]';
  }

  toString(): string {
    return '[redacted mnemonic]';
  }

  [inspect.custom](): string {
    return 'Mnemonic [redacted]';
  }
}

const WORD_INDEX = new Map(english.map((word, i) => [word, i]));

// Catches typos and truncation: word count, wordlist and the BIP-39 checksum (the last bits are a
// hash of the rest). Errors never quote the words themselves.
function assertWellFormed(phrase: string): void {
  const words = phrase.split(' ');
  if (![12, 15, 18, 21, 24].includes(words.length)) {
    throw new Error(`a mnemonic has 12, 15, 18, 21 or 24 words, this one has ${words.length}`);
  }
  const indexes = words.map((w) => WORD_INDEX.get(w));
  const unknown = indexes.filter((i) => i === undefined).length;
  if (unknown > 0) throw new Error(`the mnemonic has ${unknown} word(s) outside the BIP-39 English wordlist`);
  const bits = indexes.map((i) => i!.toString(2).padStart(11, '0')).join('');
  const checksumBits = bits.length / 33; // 11 bits a word = 32 entropy bits + 1 checksum bit per 33
  const entropy = Buffer.from(
    bits
      .slice(0, -checksumBits)
      .match(/.{8}/g)!
      .map((byte) => parseInt(byte, 2)),
  );
  const digest = createHash('sha256').update(entropy).digest();
  const expected = [...digest]
    .map((b) => b.toString(2).padStart(8, '0'))
    .join('')
    .slice(0, checksumBits);
  if (bits.slice(-checksumBits) !== expected) throw new Error('the mnemonic has a wrong BIP-39 checksum');
}
