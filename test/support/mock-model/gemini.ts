/**
 * Gemini (Gemini CLI): POST /v1beta/models/<model>:streamGenerateContent?alt=sse is the conversation;
 * :generateContent is a side call (the model router, the next-speaker check) that wants JSON text fitting the schema
 * it sends, and :countTokens a count.
 */
import { sse, type Reply } from "./server.ts";

export function geminiToolNames(body: any): string[] {
  const names: string[] = [];
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) {
    for (const declaration of Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : []) {
      if (typeof declaration?.name === "string") names.push(declaration.name);
    }
  }
  return names;
}

const usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 };

export function geminiReply(_body: any, reply: Reply, tool: string | undefined): Response {
  const parts: any[] = [];
  if (reply.text) parts.push({ text: reply.text });
  if ("tool" in reply && tool) parts.push({ functionCall: { name: tool, args: reply.input } });
  return sse([{ data: { candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata } }]);
}

/** Enum values a side call should get when a schema offers them: the user speaks next, so the turn ends. */
const PREFERRED = ["user", "flash"];

/** A value that fits a JSON schema (or Gemini's OpenAPI subset, whose types are upper case). */
export function sampleOf(schema: any): unknown {
  if (!schema || typeof schema !== "object") return "mock";
  if (Array.isArray(schema.enum) && schema.enum.length > 0)
    return schema.enum.find((value: unknown) => PREFERRED.includes(String(value))) ?? schema.enum[0];
  const type = String(
    Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? (schema.properties ? "object" : "string")),
  ).toLowerCase();
  if (type === "object") {
    const value: Record<string, unknown> = {};
    for (const [key, property] of Object.entries(schema.properties ?? {})) value[key] = sampleOf(property);
    return value;
  }
  if (type === "array") return [];
  // 1, not 0: Gemini CLI's router asks for a score "from 1-100" and rejects 0 (its schema does not say minimum).
  if (type === "number" || type === "integer") return typeof schema.minimum === "number" ? schema.minimum : 1;
  if (type === "boolean") return false;
  return "mock";
}

export function geminiSideAnswer(action: string, body: any): Response {
  if (action === "countTokens") return Response.json({ totalTokens: 100 });
  if (action === "generateContent") {
    const config = body?.generationConfig ?? {};
    const schema = config.responseJsonSchema ?? config.responseSchema;
    const text = schema ? JSON.stringify(sampleOf(schema)) : "Done.";
    return Response.json({
      candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
      usageMetadata,
    });
  }
  return Response.json({ error: { code: 404, message: `the mock model does not serve :${action}`, status: "NOT_FOUND" } }, { status: 404 });
}
