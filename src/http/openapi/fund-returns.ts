import {
  ZCreateRecovery,
  ZCreateRefund,
  ZFundReturnList,
  ZIncidentList,
  ZIncidentRecoveryCreated,
  ZRefundCreated,
} from '../../domain/returns/fund-return.schemas';
import { ZPaymentPath } from '../routes/payments';
import { EXAMPLE, fundReturnExample } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/fund-returns.ts (the partner routes; the /admin/v1 twin is not in this document) */
const common = { tags: ['Refunds and incident recoveries'], auth: 'app', scope: 'v2:payments', path: ZPaymentPath } as const;

export const fundReturnPaths: OpenApiPaths = {
  '/v2/payments/{paymentId}/refunds': {
    post: operation({
      ...common,
      operationId: 'createRefund',
      summary: 'Refund a Payment (all that is left, or an amount)',
      idempotency: 'required',
      body: {
        schema: ZCreateRefund,
        example: { amount: '5.00', destinationAddress: EXAMPLE.WALLET, reason: 'Customer returned one loaf' },
      },
      responses: { 201: { description: 'The refund, on its way.', schema: ZRefundCreated, example: { refund: fundReturnExample } } },
      errors: [409, 422, 502],
    }),
    get: operation({
      ...common,
      operationId: 'listRefunds',
      summary: "A Payment's refunds",
      responses: { 200: { description: 'The refunds.', schema: ZFundReturnList } },
    }),
  },
  '/v2/payments/{paymentId}/incident-recoveries': {
    post: operation({
      ...common,
      operationId: 'createIncidentRecovery',
      summary: 'Send funds held in an incident back',
      idempotency: 'required',
      body: {
        schema: ZCreateRecovery,
        example: { incidentId: 'incident_6Pq3', destinationAddress: EXAMPLE.WALLET, reason: 'Paid twice by mistake' },
      },
      responses: {
        201: {
          description: 'The recovery, on its way.',
          schema: ZIncidentRecoveryCreated,
          example: {
            incidentRecovery: {
              ...fundReturnExample,
              id: 'recovery_3Hj8',
              object: 'incident_recovery',
              incidentId: 'incident_6Pq3',
              reason: 'Paid twice by mistake',
            },
          },
        },
      },
      errors: [409, 422, 502],
    }),
    get: operation({
      ...common,
      operationId: 'listIncidentRecoveries',
      summary: "A Payment's incident recoveries",
      responses: { 200: { description: 'The recoveries.', schema: ZFundReturnList } },
    }),
  },
  '/v2/payments/{paymentId}/incidents': {
    get: operation({
      ...common,
      operationId: 'listIncidents',
      summary: 'Funds a Payment holds for recovery',
      responses: { 200: { description: 'The incidents.', schema: ZIncidentList } },
    }),
  },
};
