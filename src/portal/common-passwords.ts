// Passwords too easy to guess, refused when one is chosen (NIST SP 800-63B 3.1.1.2: compare new passwords against
// breached, common and repetitive ones). The list is held offline: the `passwords-common` dictionary of
// @zxcvbn-ts/language-common (MIT), 49,233 passwords most common in public leaks, loaded once at start-up (~3 MB).
import { dictionary } from "@zxcvbn-ts/language-common";

const COMMON = new Set(dictionary["passwords-common"]);

/** A common word padded with digits and marks is as easy to guess as the word: `password1234`, `!dragon2024`. */
const PADDING = /^[^\p{L}]+|[^\p{L}]+$/gu;
/** Shorter words stand for too little (`qw` + digits is not a known password); they are judged whole only. */
const MIN_CORE = 4;

/** One short piece repeated (`aaaaaaaaaaaa`, `abcabcabcabc`, `123412341234`). */
const REPEATED = /^(.{1,6}?)\1+$/su;

/** Whether every character is the one before it plus one, or every one minus one (`abcdefghijkl`, `987654321`). */
function isSequence(password: string): boolean {
  const codes = [...password].map((ch) => ch.codePointAt(0)!);
  const step = codes[1]! - codes[0]!;
  return (step === 1 || step === -1) && codes.every((code, i) => i === 0 || code - codes[i - 1]! === step);
}

/**
 * Why `password` is too easy to guess: `common` (in the list, whole or around its padding), `pattern` (a repetition
 * or a sequence); null when it is neither. Case does not make a password less common.
 */
export function weakPassword(password: string): "common" | "pattern" | null {
  const lower = password.normalize("NFC").toLowerCase();
  const core = lower.replace(PADDING, "");
  if (COMMON.has(lower) || (core.length >= MIN_CORE && COMMON.has(core))) return "common";
  if (lower.length > 1 && (REPEATED.test(lower) || isSequence(lower))) return "pattern";
  return null;
}
