/**
 * The engine (transformer-model.ts, onnxruntime) against PyTorch + transformers (+ PEFT):
 * reference-parity-cases.ts on the fixtures of `npm run reference:engine`, at the default
 * tolerances and, on log-probs and entropies, within 4× PyTorch fp32's own error (+ 1e-6): the
 * max-shifted log-softmax of issue 28 item 4.
 *
 * Measured (2026-12-03), engine vs PyTorch fp32, both against float64: SmolLM2's shape (2 layers)
 * log-probs 3.8e-6 vs 8.0e-6, entropies 9.6e-6 vs 5.7e-6, gradients ≤ 2.9e-6 vs ≤ 6.3e-6 relative on
 * every fixture; 30 layers (opt-in) log-probs 7.3e-6 vs 5.5e-6. The wasm model this engine
 * replaced reached 1.1e-4 on log-probs and 1.5e-4 on entropies at SmolLM2's vocabulary.
 */
import { TransformerModel } from './transformer-model.ts';
import { referenceParityCases } from './reference-parity-cases.ts';

referenceParityCases(
  'TransformerModel',
  (config, params, options) => TransformerModel.fromParams(config, params, options),
  { fp32Factor: 4 },
);
