/**
 * Swedish payment identifiers with valid check digits, so a model (or a person) checking them
 * finds real-looking data: IBAN (ISO 13616, mod 97), bankgiro and plusgiro ("postgiro") numbers
 * and organisation numbers (Luhn / mod 10), and VAT numbers (SE + organisation number + 01).
 */
import type { Rng } from './prng.js';

/** Luhn check digit for a string of digits (the digit that makes the whole string pass). */
export function luhnCheckDigit(payload: string): number {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    // Doubling starts from the rightmost payload digit, since the check digit will follow it.
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function luhnValid(digits: string): boolean {
  return /^\d{2,}$/.test(digits) && luhnCheckDigit(digits.slice(0, -1)) === Number(digits.at(-1));
}

/** Remainder mod 97 of the IBAN's numeric form (letters become 10..35), computed piecewise. */
function ibanMod97(rearranged: string): number {
  let rem = 0;
  for (const ch of rearranged) {
    const code = /[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of code) rem = (rem * 10 + Number(digit)) % 97;
  }
  return rem;
}

export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/[\s-]/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(compact)) return false;
  return ibanMod97(compact.slice(4) + compact.slice(0, 4)) === 1;
}

/** Swedish clearing-based bank codes (3 digits) that appear in real SE IBANs. */
const SE_BANK_CODES = ['120', '300', '500', '600', '800', '920', '957', '965'];

/** A Swedish IBAN (24 characters) in compact form. */
export function makeSwedishIban(rng: Rng): string {
  const bban = rng.pick(SE_BANK_CODES) + rng.digits(17);
  const check = 98 - ibanMod97(bban + 'SE00');
  return `SE${String(check).padStart(2, '0')}${bban}`;
}

/** IBAN in the printed form, groups of four. */
export function groupIban(compact: string): string {
  return compact.replace(/(.{4})(?=.)/g, '$1 ');
}

/** Bankgiro: 7 or 8 digits ending in a Luhn digit, printed NNN-NNNN or NNNN-NNNN. */
export function makeBankgiro(rng: Rng): string {
  const length = rng.chance(0.6) ? 8 : 7;
  const payload = String(rng.int(1, 9)) + rng.digits(length - 2);
  const all = payload + luhnCheckDigit(payload);
  return `${all.slice(0, -4)}-${all.slice(-4)}`;
}

/** Plusgiro (postgiro): 6 to 8 digits ending in a Luhn digit, printed in pairs from the right, e.g. 12 34 56-7. */
export function makePostgiro(rng: Rng): string {
  const length = rng.int(6, 8);
  const payload = String(rng.int(1, 9)) + rng.digits(length - 2);
  const body = payload.replace(/(\d)(?=(\d{2})+$)/g, '$1 ');
  return `${body}-${luhnCheckDigit(payload)}`;
}

/** Organisation number of an aktiebolag: 55xxxx-xxxx with a Luhn digit. */
export function makeOrgNumber(rng: Rng): string {
  const payload = '55' + rng.digits(7);
  return payload + luhnCheckDigit(payload);
}

/** Swedish VAT number: SE + the 10-digit organisation number + 01. */
export function vatFromOrgNumber(orgNumber: string): string {
  return `SE${orgNumber}01`;
}

/** How identifiers are compared: spaces and dashes ignored, letters upper-cased. */
export function normalizeIdentifier(value: string): string {
  return value.replace(/[\s\u00a0-]/g, '').toUpperCase();
}
