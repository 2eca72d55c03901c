// ONNX Runtime's CPU provider generating from a decoder with an explicit KV cache, as the
// benchmark peer of `placer generate` (bench_generate): the same greedy loop (the prompt, then
// one token a step, each present_* fed back as past_*), on one thread. Prints the tokens, the
// time to the first token, and the decode steps' wall times as one JSON line. A yardstick only.
//
//   node ort_generate.js MODEL.onnx PROMPT.npy NEW_TOKENS THREADS CACHE_SHAPE
//
// CACHE_SHAPE is every past_* input's shape when empty, as 1,2,0,64. A model with an
// attention_mask input (ONNX Runtime's model builder's) gets ones over every token so far, and
// one with position_ids the tokens' positions.
// The package comes from `npm install --ignore-scripts onnxruntime-node`; set NODE_PATH to the
// node_modules folder that holds it.
'use strict';
const fs = require('fs');

let ort;
try {
    ort = require('onnxruntime-node');
} catch (e) {
    console.log(JSON.stringify({error: 'onnxruntime-node is not installed: ' + e.message}));
    process.exit(3);
}

function readIds(file) {
    const bytes = fs.readFileSync(file);
    const major = bytes[6];
    const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const start = major === 1 ? 10 : 12;
    const header = bytes.toString('latin1', start, start + headerLength);
    const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
    const data = bytes.subarray(start + headerLength);
    const out = [];
    for (let i = 0; i < data.length; i += descr === '<i8' ? 8 : 4)
        out.push(descr === '<i8' ? Number(data.readBigInt64LE(i)) : data.readInt32LE(i));
    return out;
}

async function main() {
    const [model, promptFile, newTokens, threads, cacheShape] = process.argv.slice(2);
    const empty = cacheShape.split(',').map(Number);
    const session = await ort.InferenceSession.create(model, {
        intraOpNumThreads: Number(threads || 1), interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: 'all', executionProviders: ['cpu'],
    });
    const prompt = readIds(promptFile);
    const pasts = session.inputNames.filter(n => n.startsWith('past'));
    const slot = n => n.replace(/^(past_key_values|past|present)/, '');
    const pairs = pasts.map(p => [session.outputNames.find(o => o.startsWith('present') &&
                                                               slot(o) === slot(p)), p]);
    const tokens = [];
    const walls = [];
    let next = prompt;
    let cache = null;
    let length = 0; // tokens in the cache
    for (let step = 0; step < Number(newTokens); ++step) {
        const start = process.hrtime.bigint();
        const input = {input_ids: new ort.Tensor('int64', BigInt64Array.from(next.map(BigInt)),
                                                 [1, next.length])};
        // ONNX Runtime's model builder's decoders take a mask over every token so far, and
        // some exports their positions.
        if (session.inputNames.includes('attention_mask'))
            input.attention_mask = new ort.Tensor(
                'int64', new BigInt64Array(length + next.length).fill(1n),
                [1, length + next.length]);
        if (session.inputNames.includes('position_ids'))
            input.position_ids = new ort.Tensor(
                'int64', BigInt64Array.from(next.map((_, k) => BigInt(length + k))),
                [1, next.length]);
        length += next.length;
        for (const [present, past] of pairs)
            input[past] = cache ? cache[present]
                                : new ort.Tensor('float32', new Float32Array(0), empty);
        const out = await session.run(input);
        const logits = out.logits;
        const vocabulary = logits.dims[logits.dims.length - 1];
        const last = logits.data.length - vocabulary;
        let best = 0;
        for (let v = 1; v < vocabulary; ++v)
            if (logits.data[last + v] > logits.data[last + best])
                best = v;
        tokens.push(best);
        cache = out;
        next = [best];
        walls.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    console.log(JSON.stringify({tokens, time_to_first_token_ms: walls[0],
                                decode_ms: walls.slice(1)}));
}

main().catch(e => {
    console.log(JSON.stringify({error: String(e && e.message || e)}));
    process.exit(1);
});
