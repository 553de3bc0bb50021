/** Why a peer's file is left where it is: thrown by the readers, reported once per file, never fatal to a pass. */
export class Malformed extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "Malformed";
  }
}

export function malformed(reason: string): never {
  throw new Malformed(reason);
}
