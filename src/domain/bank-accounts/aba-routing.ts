/**
 * ABA routing transit numbers: 9 digits whose weighted sum (weights 3, 7, 1 repeating) is a multiple
 * of 10 (the check digit is the 9th). A JSON Schema can say "9 digits" but not this, so the link
 * checks it in code, after the schema, with the same error envelope.
 */
const WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

export function isValidAbaRoutingNumber(value: string): boolean {
  if (!/^[0-9]{9}$/.test(value)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i += 1) sum += Number(value[i]) * WEIGHTS[i]!;
  return sum % 10 === 0;
}
