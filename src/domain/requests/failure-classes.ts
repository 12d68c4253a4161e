import { HttpRequestError, LimitExceededRpcError, RpcRequestError, TimeoutError } from 'viem';

/**
 * Why a request failed when no use case said so: which of the service's dependencies, and whether
 * it is our own capacity, an upstream that could not be reached (or not in time), or an upstream
 * that answered with an error. The API's error handler turns the class into a status and code (the
 * table is in docs/decisions/api-conventions.md "Overload and upstream failures"); anything unclassified stays 500.
 *
 * No I/O and no Temporal client import: Temporal's errors are recognised by their names (the SDK
 * sets them) and gRPC's by their shape, so the domain stays off the engine.
 */
export type FailureClass =
  /** Ours: the pool had no connection in time, PostgreSQL is away or slow, the worker did not answer an update in time. */
  | { kind: 'capacity'; source: 'database' | 'temporal' }
  /** An upstream (Temporal, a chain's RPC) that could not be reached, or did not answer in time. */
  | { kind: 'unreachable'; source: 'temporal' | 'chain' }
  /** An upstream that answered, with an error. */
  | { kind: 'upstream_error'; source: 'temporal' | 'chain' };

/** How deep a cause chain is followed (wrappers rarely nest more than three). */
const MAX_DEPTH = 8;

export function classifyFailure(err: unknown): FailureClass | null {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_DEPTH && current instanceof Error; depth += 1) {
    const found = chainFailure(current) ?? temporalFailure(current) ?? databaseFailure(current);
    if (found) return found;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** viem's transport errors: the chain RPC was not reached (or not in time), or it answered an error. */
function chainFailure(err: Error): FailureClass | null {
  if (err instanceof TimeoutError || err instanceof LimitExceededRpcError) return { kind: 'unreachable', source: 'chain' };
  if (err instanceof HttpRequestError) {
    // No status: the request never got an HTTP answer (refused, reset, DNS). 408/429/502-504: the
    // provider (or the gateway in front of it) says it is away or busy.
    const away = err.status === undefined || [408, 429, 502, 503, 504].includes(err.status);
    return { kind: away ? 'unreachable' : 'upstream_error', source: 'chain' };
  }
  if (err instanceof RpcRequestError) return { kind: 'upstream_error', source: 'chain' };
  return null;
}

/** gRPC codes that say the server was not reached or did not answer in time (or sheds load). */
const GRPC_AWAY = new Set([
  1, // CANCELLED
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  10, // ABORTED
  14, // UNAVAILABLE
]);

interface GrpcStatusError extends Error {
  code: number;
  details: string;
  metadata: object;
}

/** The shape @temporalio/client's own isGrpcServiceError checks. */
function isGrpcStatusError(err: Error): err is GrpcStatusError {
  const e = err as Partial<GrpcStatusError>;
  return typeof e.code === 'number' && typeof e.details === 'string' && typeof e.metadata === 'object' && e.metadata !== null;
}

function temporalFailure(err: Error): FailureClass | null {
  switch (err.name) {
    // An update the workflow did not accept (or finish) within the call's deadline: our worker is behind.
    case 'WorkflowUpdateRPCTimeoutOrCancelledError':
      return { kind: 'capacity', source: 'temporal' };
    // Seen while a (dev) server restarts: the namespace is not loaded yet.
    case 'NamespaceNotFoundError':
      return { kind: 'unreachable', source: 'temporal' };
    case 'ServiceError': {
      // The client's wrapper of a failed call: its gRPC cause decides; without one, no answer came.
      let cause = (err as { cause?: unknown }).cause;
      for (let depth = 0; depth < MAX_DEPTH && cause instanceof Error; depth += 1) {
        if (isGrpcStatusError(cause)) return grpcFailure(cause);
        cause = (cause as { cause?: unknown }).cause;
      }
      return { kind: 'unreachable', source: 'temporal' };
    }
  }
  if (isGrpcStatusError(err)) return grpcFailure(err);
  // grpc-js, after the connection was closed (shutdown): nothing was sent.
  if (/^Channel has been shut down/.test(err.message)) return { kind: 'unreachable', source: 'temporal' };
  return null;
}

function grpcFailure(err: GrpcStatusError): FailureClass {
  return { kind: GRPC_AWAY.has(err.code) ? 'unreachable' : 'upstream_error', source: 'temporal' };
}

/** pg-pool's messages when no connection came within the acquire timeout (its error has no code). */
const POOL_TIMEOUT = /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)/;
/**
 * Prisma's codes for a database not reached, a closed connection, its own pool's timeout, and P2028:
 * an interactive transaction that got no connection within its maxWait (or outlived its timeout).
 */
const PRISMA_AWAY = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);
/** The driver adapter's kinds for the same. */
const ADAPTER_AWAY = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/** SQLSTATEs: query cancelled (statement_timeout), too many connections, server shutting down, connection exceptions. */
const SQLSTATE_AWAY = /^(57014|53300|57P0[1-3]|08\d{3})$/;
/** Node socket errors from pg itself (the chain's arrive wrapped in viem's errors, matched first). */
const SOCKET_AWAY = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

function databaseFailure(err: Error): FailureClass | null {
  const e = err as Error & { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } } };
  const adapter =
    e.meta?.driverAdapterError?.cause ?? (e.name === 'DriverAdapterError' ? (e.cause as { kind?: unknown; code?: unknown }) : undefined);
  const away =
    POOL_TIMEOUT.test(err.message) ||
    (typeof e.code === 'string' && (PRISMA_AWAY.has(e.code) || SQLSTATE_AWAY.test(e.code) || SOCKET_AWAY.has(e.code))) ||
    (typeof adapter?.kind === 'string' && ADAPTER_AWAY.has(adapter.kind)) ||
    (typeof adapter?.code === 'string' && SQLSTATE_AWAY.test(adapter.code)) ||
    /^Connection terminated unexpectedly/.test(err.message);
  return away ? { kind: 'capacity', source: 'database' } : null;
}
