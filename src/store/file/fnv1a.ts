/**
 * FNV-1a, 32 bits, unsigned: the file store's fast hash where no secret is at stake (a cursor's last line, a passed
 * id's bucket, an id's fingerprint and number). Its values are kept in files (cursors, the sent index): never change
 * it. Over bytes, or over a string's UTF-16 code units, which for an ASCII id are the same.
 */
const OFFSET_BASIS = 0x811c9dc5;
const PRIME = 0x01000193;

/** The hash of bytes[start, end). */
export function fnv1a(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let hash = OFFSET_BASIS;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, PRIME);
  return hash >>> 0;
}

/** The hash of a string's UTF-16 code units. */
export function fnv1aOfText(text: string): number {
  let hash = OFFSET_BASIS;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), PRIME);
  return hash >>> 0;
}
