import type { TCheckoutPage } from '../../domain/checkout/checkout-view.schemas';

/** What the page says in each phase: a short title and one plain sentence (the page and its live status use this alone). */
export function phaseText(page: TCheckoutPage): { title: string; detail: string } {
  const s = page.status;
  const asset = s.assetCode;
  const network = `${page.network.name} (chain ${page.network.chainId})`;
  const recipient = page.recipient.displayName;
  const received = `${s.receivedAmount} ${asset}`;
  switch (s.phase) {
    case 'awaiting_payment':
      return {
        title: 'Awaiting payment',
        detail: `Send exactly ${s.payable?.amount ?? s.amount} ${asset} on ${network} to the address below.`,
      };
    case 'seen':
      return {
        title: 'Payment seen',
        detail: `${received} is on its way and confirming. Send the remaining ${s.payable?.amount ?? ''} ${asset} to the same address.`,
      };
    case 'confirming':
      return {
        title: 'Payment seen, confirming',
        detail: `${received} is on chain and waiting for network confirmations. Nothing more to send.`,
      };
    case 'underpaid':
      return {
        title: 'Underpaid',
        detail: `Only ${received} of ${s.amount} ${asset} arrived. Send the remaining ${s.payable?.amount ?? ''} ${asset} to the same address before the time runs out.`,
      };
    case 'accepted':
      return { title: 'Payment accepted', detail: `Your payment is confirmed. ${recipient} is being paid.` };
    case 'succeeded':
      return { title: 'Payment complete', detail: `${s.amount} ${asset} paid to ${recipient}. Thank you.` };
    case 'expired':
      return {
        title: 'Expired',
        detail:
          s.receivedAmount === '0'
            ? 'This payment request has expired. Do not send anything to its address.'
            : `This payment request expired before the full amount arrived (${received} received). Do not send more; ask ${recipient} to return it.`,
      };
    case 'cancelled':
      return { title: 'Cancelled', detail: `${recipient} cancelled this payment request. Do not send anything to its address.` };
    case 'failed':
      return { title: 'Payment failed', detail: `This payment could not be completed. Contact ${recipient}.` };
  }
}
