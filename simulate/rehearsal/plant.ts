import type { EventObservations, ObservedPayment, PlannedPayment, ProviderPayout, ServicePayout } from './verdicts';

/**
 * `--plant <fault>`: a fault planted in what the rehearsal observed, just before it judges, to show
 * that its checks fail on it: a settlement that never reached the recipient, an event the partner never
 * got, a payout the provider made twice. A run with a plant must fail, naming the planted fault.
 */
export const PLANTS = ['skipped-settlement', 'dropped-event', 'double-payout'] as const;
export type Plant = (typeof PLANTS)[number];

export interface Observations {
  planned: PlannedPayment[];
  payments: Map<string, ObservedPayment>;
  events: Record<string, EventObservations>;
  servicePayouts: ServicePayout[];
  providerPayouts: ProviderPayout[];
}

/** The observations with the fault planted; throws when the run has nothing to plant it in. */
export function plantFault(plant: Plant, o: Observations): Observations {
  switch (plant) {
    case 'skipped-settlement':
      return { ...o, payments: skipSettlement(o) };
    case 'dropped-event':
      return { ...o, events: dropEvent(o.events) };
    case 'double-payout':
      return { ...o, providerPayouts: payTwice(o.providerPayouts) };
  }
}

function skipSettlement(o: Observations): Map<string, ObservedPayment> {
  const victim = o.planned.find((p) => p.plan === 'paid_in_full' && o.payments.get(p.id)?.status === 'succeeded');
  if (!victim) throw new Error('nothing to plant a skipped settlement in: no Payment paid in full succeeded');
  const payments = new Map(o.payments);
  payments.set(victim.id, { ...payments.get(victim.id)!, settledOnChainAtomic: null });
  return payments;
}

function dropEvent(events: Record<string, EventObservations>): Record<string, EventObservations> {
  const [endpoint, e] = Object.entries(events).find(([, x]) => x.receipts.length > 0) ?? [];
  if (!endpoint || !e) throw new Error('nothing to plant a dropped event in: no event was delivered');
  const dropped = e.receipts[0]!.id;
  return { ...events, [endpoint]: { ...e, receipts: e.receipts.filter((r) => r.id !== dropped) } };
}

function payTwice(payouts: ProviderPayout[]): ProviderPayout[] {
  const first = payouts[0];
  if (!first) throw new Error('nothing to plant a double payout in: the provider made no payout');
  return [...payouts, { ...first, payoutId: `${first.payoutId}-again` }];
}
