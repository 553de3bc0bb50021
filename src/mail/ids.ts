const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const ID_LENGTH = 8;
const ID_PATTERN = /^[A-Za-z0-9]{8}$/;

/**
 * 8 base62 characters (~47.6 bits). Rejection sampling keeps every character uniform; the global
 * crypto.getRandomValues is used because importing node:crypto costs ~8 ms of start-up. An index loop, not for-of:
 * the iterator's first use costs start-up time on every send.
 */
export function newId(): string {
  let id = "";
  const bytes = new Uint8Array(16);
  while (id.length < ID_LENGTH) {
    crypto.getRandomValues(bytes);
    for (let i = 0; i < bytes.length && id.length < ID_LENGTH; i++) {
      if (bytes[i]! < 248) id += BASE62[bytes[i]! % 62];
    }
  }
  return id;
}

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * Whether `text` is one or more ASCII digits. A loop rather than /^\d+$/: it runs on every send and receive, and
 * the first regular expression a process runs costs it start-up time (bench/builtins.ts).
 */
export function isDecimal(text: string): boolean {
  if (text === "") return false;
  for (let i = 0; i < text.length; i++) if (text[i]! < "0" || text[i]! > "9") return false;
  return true;
}
