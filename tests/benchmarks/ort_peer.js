// ONNX Runtime's CPU provider as a benchmark peer (bench_vs_ort): runs one model on inputs given
// as .npy files and prints its median latency as one JSON line. A yardstick only: the product
// never loads ONNX Runtime.
//
//   node ort_peer.js MODEL.onnx THREADS WARMUP ITERATIONS IN_DIR OUT_DIR
//
// IN_DIR holds input_K.npy for the model's K-th input; OUT_DIR gets output_K.npy for its K-th
// output. The package comes from `npm install --ignore-scripts onnxruntime-node`; set NODE_PATH
// to the node_modules folder that holds it.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
    ort = require('onnxruntime-node');
} catch (e) {
    console.log(JSON.stringify({error: 'onnxruntime-node is not installed: ' + e.message}));
    process.exit(3);
}

const npyTypes = {
    '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
    '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array],
    '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
    '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array],
    '<u8': ['uint64', BigUint64Array],
};

function readNpy(file) {
    const bytes = fs.readFileSync(file);
    if (bytes.toString('latin1', 1, 6) !== 'NUMPY')
        throw new Error(file + ': not a .npy file');
    const major = bytes[6];
    const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const start = major === 1 ? 10 : 12;
    const header = bytes.toString('latin1', start, start + headerLength);
    const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
    const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
    const dims = shapeText.split(',').map(s => s.trim()).filter(s => s.length).map(Number);
    if (!npyTypes[descr])
        throw new Error(file + ': element type ' + descr + ' is not supported here');
    const [type, Typed] = npyTypes[descr];
    const data = bytes.subarray(start + headerLength);
    const copy = new Uint8Array(data.length); // aligned for the typed view
    copy.set(data);
    return new ort.Tensor(type, new Typed(copy.buffer, 0, data.length / Typed.BYTES_PER_ELEMENT), dims);
}

function writeNpy(file, tensor) {
    const descr = Object.keys(npyTypes).find(k => npyTypes[k][0] === tensor.type);
    if (!descr)
        throw new Error('output type ' + tensor.type + ' cannot be written');
    const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
    let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
    while ((header.length + 11) % 64 !== 0)
        header += ' ';
    header += '\n';
    const prefix = Buffer.alloc(10);
    prefix.write('\x93NUMPY', 0, 'latin1');
    prefix[6] = 1;
    prefix[7] = 0;
    prefix.writeUInt16LE(header.length, 8);
    const data = tensor.data;
    fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
                                          Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
    const [model, threads, warmup, iterations, inDir, outDir] = process.argv.slice(2);
    if (!outDir) {
        console.log(JSON.stringify({error: 'usage: ort_peer.js MODEL THREADS WARMUP ITERATIONS IN_DIR OUT_DIR'}));
        process.exit(2);
    }
    const loadStart = process.hrtime.bigint();
    const session = await ort.InferenceSession.create(model, {
        intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential',
        graphOptimizationLevel: 'all', executionProviders: ['cpu'],
    });
    const loadMillis = Number(process.hrtime.bigint() - loadStart) / 1e6;
    const feeds = {};
    session.inputNames.forEach((name, k) => {
        feeds[name] = readNpy(path.join(inDir, `input_${k}.npy`));
    });
    let outputs;
    for (let i = 0; i < Number(warmup); ++i)
        outputs = await session.run(feeds);
    const times = [];
    for (let i = 0; i < Number(iterations); ++i) {
        const t = process.hrtime.bigint();
        outputs = await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    times.sort((a, b) => a - b);
    session.outputNames.forEach((name, k) => writeNpy(path.join(outDir, `output_${k}.npy`), outputs[name]));
    console.log(JSON.stringify({median_ms: times[Math.floor(times.length / 2)], load_ms: loadMillis,
                                rss_mib: process.memoryUsage().rss / 1048576}));
}

main().catch(e => {
    console.log(JSON.stringify({error: String(e && e.message ? e.message : e)}));
    process.exit(1);
});
