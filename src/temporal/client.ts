import { Client, Connection } from '@temporalio/client';

export interface TemporalClientOptions {
  address: string;
  namespace: string;
}

/** The API's Temporal client: starts, signals and updates workflows. */
export async function connectTemporalClient(opts: TemporalClientOptions): Promise<Client> {
  const connection = await Connection.connect({ address: opts.address, connectTimeout: '10s' });
  return new Client({ connection, namespace: opts.namespace });
}

/** Health probe: one cheap RPC that needs the frontend service to answer. */
export function temporalHealthProbe(client: Client): () => Promise<void> {
  return async () => {
    await client.connection.workflowService.getSystemInfo({});
  };
}
