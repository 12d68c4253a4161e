/** A valid US link body (JPMorgan Chase's New York routing number); accountType left to its default. */
export const US_NUMBER = '000123456789';

export const usBody = (accountNumber = US_NUMBER) => ({
  country: 'US',
  currency: 'USD',
  accountHolderName: 'Ada Lovelace',
  bankName: 'JPMorgan Chase Bank, N.A.',
  bankCode: 'CHASUS33',
  routingNumber: '021000021',
  accountNumber,
});
