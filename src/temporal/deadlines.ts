import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { makeGrpcRetryInterceptor, defaultGrpcRetryOptions } from '@temporalio/client';

/**
 * Long polls whose length the server bounds (a workflow's result, an accepted update's outcome):
 * a client deadline would cut them short, so they keep the server's.
 */
const LONG_POLLS = ['/GetWorkflowExecutionHistory', '/PollWorkflowExecutionUpdate'];

/**
 * Every other call to Temporal gets a deadline of `timeoutMs` unless it sets its own
 * (`connection.withDeadline`). Without one, a paused or unreachable server holds a request for as long
 * as the client's retries last (up to 10 attempts with backoff) or forever.
 */
export function deadlineInterceptor(timeoutMs: number): Interceptor {
  return (options, nextCall) => {
    const path = options.method_definition.path;
    if (options.deadline !== undefined || LONG_POLLS.some((m) => path.endsWith(m))) return new InterceptingCall(nextCall(options));
    return new InterceptingCall(nextCall({ ...options, deadline: Date.now() + timeoutMs }));
  };
}

/**
 * The connection's interceptors: the deadline first (outermost), so it bounds the client's own retries
 * (which keep Temporal's defaults) as a whole.
 */
export function temporalInterceptors(rpcTimeoutMs: number): Interceptor[] {
  return [deadlineInterceptor(rpcTimeoutMs), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())];
}
