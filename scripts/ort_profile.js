// Writes ONNX Runtime's profile of a model (its CPU provider, one thread): the profile
// `placer profile import` reads (tests/models/profiles were made so). Inputs get fixed data of
// the model's types, open dimensions taken as 1; three runs are profiled.
//
//   NODE_PATH=.../node_modules node scripts/ort_profile.js MODEL.onnx OUT_PREFIX [all|disabled]
//
// The profile is written as OUT_PREFIX_<date>.json; its name is printed. onnxruntime-node comes
// from `npm install --ignore-scripts onnxruntime-node`: a yardstick, never a dependency.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
    const [model, prefix, level] = process.argv.slice(2);
    const session = await ort.InferenceSession.create(model, {
        enableProfiling: true, profileFilePrefix: prefix, graphOptimizationLevel: level || 'all',
        intraOpNumThreads: 1, executionProviders: ['cpu'],
    });
    const feeds = {};
    for (const meta of session.inputMetadata) {
        const dims = (meta.shape || [1]).map(d => (typeof d === 'number' && d > 0 ? d : 1));
        const n = dims.reduce((a, b) => a * b, 1);
        feeds[meta.name] = meta.type === 'int64'
            ? new ort.Tensor('int64', new BigInt64Array(n).fill(1n), dims)
            : meta.type === 'int32' ? new ort.Tensor('int32', new Int32Array(n).fill(1), dims)
            : new ort.Tensor('float32', new Float32Array(n).fill(0.5), dims);
    }
    for (let run = 0; run < 3; ++run)
        await session.run(feeds);
    console.log(session.endProfiling());
})().catch(e => {
    console.error(String(e && e.message || e));
    process.exit(1);
});
