// Runs an ONNX model in ONNX Runtime (onnxruntime-node, CPU) for Crema's
// export tests.
//
//   node run.js MODEL.onnx DIR
//
// DIR/request.json: {"inputs": [{"name", "shape", "file"}], "outputs": [name, ...]};
// each input file holds the tensor's float32 values, little-endian, row-major.
// Writes each output to DIR/<index>.out (its values as float32) and
// DIR/response.json: {"outputs": [{"name", "shape", "file"}]}. Integer
// outputs are written as float32 too. Exits 1 with the runtime's message on
// stderr when the model does not load or run.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function readInput(dir, input) {
  const bytes = fs.readFileSync(path.join(dir, input.file));
  const values = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const count = input.shape.reduce((a, b) => a * b, 1);
  if (values.length !== count) {
    throw new Error(`input ${input.name}: ${values.length} values for shape [${input.shape}]`);
  }
  return new ort.Tensor('float32', Float32Array.from(values), input.shape);
}

function writeOutput(dir, index, name, tensor) {
  const file = `${index}.out`;
  const values = Float32Array.from(tensor.data, Number);
  fs.writeFileSync(path.join(dir, file), Buffer.from(values.buffer));
  return {name, shape: tensor.dims.map(Number), file};
}

async function main() {
  const [model, dir] = process.argv.slice(2);
  if (!model || !dir) throw new Error('usage: node run.js MODEL.onnx DIR');
  const request = JSON.parse(fs.readFileSync(path.join(dir, 'request.json'), 'utf8'));
  const session = await ort.InferenceSession.create(model);
  const feeds = {};
  for (const input of request.inputs) feeds[input.name] = readInput(dir, input);
  const results = await session.run(feeds, request.outputs);
  const outputs = request.outputs.map((name, i) => writeOutput(dir, i, name, results[name]));
  fs.writeFileSync(path.join(dir, 'response.json'), JSON.stringify({outputs}));
}

main().catch((error) => {
  process.stderr.write(`run.js: ${error.message}\n`);
  process.exit(1);
});
