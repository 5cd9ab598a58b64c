#!/usr/bin/env node
// Times an ONNX model's forward pass in ONNX Runtime (the npm package
// onnxruntime-node), as scripts/bench/dnn_forward.py times Crema and OpenCV.
//
//   dnn_forward_ort.js NET.onnx ITERATIONS
//
// The module is found by Node's require paths or at ORT_NODE (the path of
// an onnxruntime-node folder). One session on the CPU, THREADS (default 2)
// intra-op threads, one inter-op thread, sequential execution, all graph
// optimisations; the input is uniform noise in [-1, 1) (the values change
// no kernel's work). Three untimed runs, then ITERATIONS timed ones; prints
// "median MS fastest MS" of them.
'use strict';

const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

async function main() {
  const [model, iterationsText] = process.argv.slice(2);
  const iterations = Number(iterationsText);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(process.env.THREADS || 2),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const input = session.inputNames[0];
  const dims = session.inputMetadata
    ? session.inputMetadata.find((m) => m.name === input).shape
    : JSON.parse(process.env.INPUT_SHAPE);
  const count = dims.reduce((a, b) => a * b, 1);
  const data = Float32Array.from({length: count}, () => 2 * Math.random() - 1);
  const feeds = {[input]: new ort.Tensor('float32', data, dims)};
  for (let i = 0; i < 3; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  console.log(`median ${median.toFixed(3)} fastest ${times[0].toFixed(3)}`);
}

main().catch((error) => {
  console.error(`dnn_forward_ort.js: ${error.message}`);
  process.exit(1);
});
