// The consumer's verifier lives in the partner client package, the one home of the algorithm; the
// service's tests, examples and simulation use it from here.
export * from '../../clients/typescript/src/verify';
