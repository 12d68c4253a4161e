// Every workflow the worker runs. Workflow files import activities with `import type` only.
export { paymentWorkflow } from './payment';
export { depositWorkflow } from './deposit';
export { depositReconciliationWorkflow } from './deposit-reconciliation';
export { chainScannerWorkflow } from './chain-scanner';
export { webhookDelivery, webhookDispatcher } from './webhooks';
export { ledgerReconciliationWorkflow } from './ledger-reconciliation';
export { paymentReconciliationWorkflow } from './payment-reconciliation';
export { vaultFundingWorkflow } from './vault-funding';
export { fundReturnWorkflow } from './fund-return';
