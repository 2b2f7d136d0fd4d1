import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DEFAULT_VALUE_MODEL, FEATURES, valueOf, type Feature, type ValueModel } from '../../src/context/value-model.js';

/** The model's sum as a loop over FEATURES (what valueOf computed before its terms were written out). */
function loopValue(model: ValueModel, features: Readonly<Record<Feature, number>>): number {
  let z = model.bias;
  for (const f of FEATURES) if (f !== 'bias') z += (model[f] ?? 0) * (features[f] ?? 0);
  return 1 / (1 + Math.exp(-z));
}

/** Every property a call reads from `target`, in order. */
function reads<T extends object>(target: T): { proxy: T; names: string[] } {
  const names: string[] = [];
  const proxy = new Proxy(target, {
    get(object, name, receiver) {
      if (typeof name === 'string') names.push(name);
      return Reflect.get(object, name, receiver) as unknown;
    },
  });
  return { proxy, names };
}

describe('valueOf', () => {
  it('reads every feature of FEATURES, in its order, from the model and the features', () => {
    // A feature added to FEATURES and not to valueOf's terms (or terms out of order) fails here.
    const model = reads({ ...DEFAULT_VALUE_MODEL });
    const features = reads(Object.fromEntries(FEATURES.map((f) => [f, 0.5])) as Record<Feature, number>);
    valueOf(model.proxy, features.proxy);
    expect(model.names).toEqual([...FEATURES]);
    expect(features.names).toEqual(FEATURES.filter((f) => f !== 'bias'));
  });

  it('is the loop over FEATURES to the bit, partial models and features included', () => {
    const weight = fc.option(fc.double({ min: -8, max: 8, noNaN: true }), { nil: undefined });
    const value = fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined });
    const record = (arb: fc.Arbitrary<number | undefined>): fc.Arbitrary<Record<string, number>> =>
      fc.tuple(...FEATURES.map(() => arb)).map((values) => Object.fromEntries(FEATURES.flatMap((f, i) => (values[i] === undefined ? [] : [[f, values[i]]]))));
    fc.assert(
      fc.property(record(weight), record(value), fc.double({ min: -8, max: 8, noNaN: true }), (w, x, bias) => {
        const model = { ...w, bias } as ValueModel;
        const features = x as Record<Feature, number>;
        expect(Object.is(valueOf(model, features), loopValue(model, features))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('is the loop over FEATURES for the shipped model on one-hot features', () => {
    for (const f of FEATURES) {
      const features = Object.fromEntries(FEATURES.map((g) => [g, g === f ? 1 : 0])) as Record<Feature, number>;
      expect(valueOf(DEFAULT_VALUE_MODEL, features)).toBe(loopValue(DEFAULT_VALUE_MODEL, features));
    }
  });
});
