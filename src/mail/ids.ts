export const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const ID_LENGTH = 8;
const ID_PATTERN = /^[A-Za-z0-9]{8}$/;

/**
 * 8 base62 characters (~47.6 bits). Rejection sampling keeps every character uniform; the global
 * crypto.getRandomValues is used because importing node:crypto costs ~8 ms of start-up.
 */
export function newId(): string {
  let id = "";
  const bytes = new Uint8Array(16);
  while (id.length < ID_LENGTH) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      if (id.length === ID_LENGTH) break;
      if (byte < 248) id += BASE62[byte % 62];
    }
  }
  return id;
}

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** Whether `text` is one or more ASCII digits. */
export function isDecimal(text: string): boolean {
  if (text === "") return false;
  for (let i = 0; i < text.length; i++) if (text[i]! < "0" || text[i]! > "9") return false;
  return true;
}
