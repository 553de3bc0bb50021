/**
 * Times the first and the second call of built-in methods in a compiled binary, as agentmail's start-up meets them:
 * a method that JavaScriptCore implements in JavaScript (map, filter, flatMap, some, sort, Array.from, RegExp#test…)
 * is compiled on its first call, once per process; a native one (indexOf, includes, join, split) is not. Node's
 * built-in modules are timed the same way: the first import loads the module, the second finds it loaded.
 * bench/builtins.ts compiles and runs it; prints one `name first_us second_us` line per method.
 */
const list = [1, 2, 3];
const lines: string[] = [];
function time(name: string, call: () => unknown): void {
  const start = performance.now();
  call();
  const first = performance.now() - start;
  const again = performance.now();
  call();
  const second = performance.now() - again;
  lines.push(`${name} ${Math.round(first * 1000)} ${Math.round(second * 1000)}`);
}
time("for loop", () => {
  let sum = 0;
  for (let i = 0; i < list.length; i++) sum += list[i]!;
  return sum;
});
time("for...of", () => {
  let sum = 0;
  for (const each of list) sum += each;
  return sum;
});
time("Array#map", () => list.map((each) => each + 1));
time("Array#filter", () => list.filter((each) => each > 1));
time("Array#flatMap", () => list.flatMap((each) => [each]));
time("Array#some", () => list.some((each) => each > 2));
time("Array#find", () => list.find((each) => each > 2));
time("Array#forEach", () => {
  list.forEach((each) => void each);
});
time("Array#at", () => list.at(-1));
time("Array#sort", () => [3, 1, 2].sort((a, b) => a - b));
time("Array#reduce", () => list.reduce((sum, each) => sum + each, 0));
time("Array.from", () => Array.from(list));
time("Array#includes", () => list.includes(2));
time("Array#indexOf", () => list.indexOf(2));
time("Array#join", () => list.join(","));
time("String#split", () => "a b c".split(" "));
time("String#padStart", () => "a".padStart(3, "0"));
time("String#replace (regex)", () => "abc".replace(/b/, "x"));
time("RegExp#test", () => /^a+$/.test("aaa"));
time("JSON.parse", () => JSON.parse('{"a":1}'));
time("Object.entries", () => Object.entries({ a: 1 }));
time("new Set", () => new Set(list));
time("Buffer.from (utf8)", () => Buffer.from("hello", "utf8"));
time("Buffer.allocUnsafe", () => Buffer.allocUnsafe(64));
time("Buffer.compare", () => Buffer.compare(new Uint8Array(4), new Uint8Array(4)));
time("new Uint8Array", () => new Uint8Array(64));
const encoder = new TextEncoder();
time("TextEncoder#encode", () => encoder.encode("hello"));
async function timeImport(name: string, load: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await load();
  const first = performance.now() - start;
  const again = performance.now();
  await load();
  const second = performance.now() - again;
  lines.push(`${name} ${Math.round(first * 1000)} ${Math.round(second * 1000)}`);
}
// In the order agentmail would meet them: node:fs first, since every command needs it.
await timeImport("import node:fs", () => import("node:fs"));
await timeImport("import node:path", () => import("node:path"));
await timeImport("import node:os", () => import("node:os"));
console.log(lines.join("\n"));
export {};
