// The least a compiled Bun program costs: start, print a line, exit.
console.log("hello");
