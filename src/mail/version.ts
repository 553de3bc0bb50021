import packageJson from "../../package.json" with { type: "json" };

/** Embedded at build time: the compiled binary carries the version it was built from. */
export const VERSION: string = packageJson.version;
