// Preloaded into the node that runs the WASM Lean (`node --require THIS lean.js ...`).
//
// Lean's threads are emscripten pthreads, i.e. node Workers, created without
// resource limits: 4 MB of stack each. Elaborating a file recurses once per
// command, on the main thread (sized by node's --stack-size) and in a worker,
// so a file of about 5,800 commands overflowed a worker's stack. Every Worker
// made after this runs gets VERISCALE_LEAN_WORKER_STACK_MB instead (set by
// veriscale's WasmRunner); the memory is only reserved,
// and touched as the recursion needs it.
"use strict";
const threads = require("worker_threads");
const STACK_MB = Number(process.env.VERISCALE_LEAN_WORKER_STACK_MB || "0");
if (STACK_MB > 0) {
  const Base = threads.Worker;
  threads.Worker = class extends Base {
    constructor(file, options = {}) {
      const limits = { ...(options.resourceLimits || {}) };
      if (!limits.stackSizeMb) limits.stackSizeMb = STACK_MB;
      super(file, { ...options, resourceLimits: limits });
    }
  };
}
