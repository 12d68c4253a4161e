import { startTracing } from './tracing';

// Imported first by the service's entry point: instrumentation must be in place before pg and http load.
startTracing();
