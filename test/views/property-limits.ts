/**
 * Caps a property's run, shrinking included: a failing timeline shrinks for a long time otherwise. A run
 * cut short counts as a failure (passing runs take ~2 s here), with the counterexample shrunk so far.
 */
export const PROPERTY_LIMITS = { interruptAfterTimeLimit: 20_000, markInterruptAsFailure: true } as const;
