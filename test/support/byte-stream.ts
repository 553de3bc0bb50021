/**
 * A child's stdout or stderr, chunk by chunk. Reading through the stream's reader rather than `for await` over the
 * stream itself type-checks whichever ReadableStream declaration is in force (Bun's, Node's or the DOM's: only
 * Bun's and Node's declare it async-iterable).
 */
export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
