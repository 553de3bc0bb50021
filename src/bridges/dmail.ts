/**
 * D-Mail files: Markdown with frontmatter that must pass the v1 schema (dmail-schema.ts). A tool reads D-Mails from
 * its `inbox/`, writes them to its `outbox/` and keeps processed ones in `archive/`; the file's stem is its name.
 */
import { validateDmail, type DmailFrontmatter } from "./dmail-schema.ts";
import { readFrontmatter, writeFrontmatter } from "./frontmatter.ts";

export interface DmailMessage {
  frontmatter: DmailFrontmatter;
  body: string;
}

export function parseDmail(text: string): DmailMessage {
  const { data, body } = readFrontmatter(text);
  return { frontmatter: validateDmail(data), body };
}

/** The seed's key order; the frontmatter is validated first, so agentmail never writes a D-Mail the schema refuses. */
export function formatDmail(message: DmailMessage): string {
  const { name, kind, description, issues, severity, targets, metadata } = validateDmail({ ...message.frontmatter });
  return writeFrontmatter(
    {
      name,
      kind,
      description,
      issues: issues?.length ? issues : undefined,
      severity,
      targets: targets?.length ? targets : undefined,
      metadata: metadata && Object.keys(metadata).length > 0 ? metadata : undefined,
      "dmail-schema-version": message.frontmatter["dmail-schema-version"],
    },
    message.body,
  );
}

export const dmailFileName = (name: string) => `${name}.md`;
