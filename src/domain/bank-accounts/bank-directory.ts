import type { BankCountry } from '../../config/environments';

/**
 * The bank directory behind GET /v2/payments/external-bank/banks and the link's bankCode rule: a
 * small, curated list per country, shipped with the service (it changes with a release, not at run
 * time). bankCode is the bank's SWIFT BIC (8 characters, branch code left out): one stable,
 * public identifier per bank in all three countries.
 */
export interface DirectoryBank {
  bankCode: string;
  name: string;
  shortName: string;
  swiftBic: string;
  /** US: the bank's published ABA routing numbers (a bank has more; any checksum-valid one is accepted). */
  routingNumbers?: string[];
  /** VN: the bank's NAPAS BIN (VietQR bank id). */
  napasBin?: string;
}

export interface CountryDirectory {
  country: BankCountry;
  /** Where the facts come from, so a reviewer can check each entry. */
  source: string;
  /** Bumped whenever the list changes. */
  version: string;
  banks: DirectoryBank[];
}

const bank = (swiftBic: string, name: string, shortName: string, extra: Partial<DirectoryBank> = {}): DirectoryBank => ({
  bankCode: swiftBic,
  name,
  shortName,
  swiftBic,
  ...extra,
});

export const BANK_DIRECTORY: Record<BankCountry, CountryDirectory> = {
  US: {
    country: 'US',
    source:
      'ABA routing numbers as published by each bank (wire and ACH instructions on its website) and listed in the Federal Reserve E-Payments Routing Directory (frbservices.org); SWIFT BICs from each bank.',
    version: '2026-11-23',
    banks: [
      bank('CHASUS33', 'JPMorgan Chase Bank, N.A.', 'Chase', { routingNumbers: ['021000021', '071000013'] }),
      bank('BOFAUS3N', 'Bank of America, N.A.', 'Bank of America', { routingNumbers: ['026009593', '121000358', '011000138'] }),
      bank('WFBIUS6S', 'Wells Fargo Bank, N.A.', 'Wells Fargo', { routingNumbers: ['121000248'] }),
      bank('CITIUS33', 'Citibank, N.A.', 'Citi', { routingNumbers: ['021000089'] }),
      bank('USBKUS44', 'U.S. Bank National Association', 'U.S. Bank', { routingNumbers: ['091000022'] }),
      bank('PNCCUS33', 'PNC Bank, National Association', 'PNC', { routingNumbers: ['043000096'] }),
      bank('BRBTUS33', 'Truist Bank', 'Truist', { routingNumbers: ['061000104'] }),
      bank('HIBKUS44', 'Capital One, National Association', 'Capital One', { routingNumbers: ['051405515'] }),
      bank('NRTHUS33', 'TD Bank, N.A.', 'TD Bank', { routingNumbers: ['031101266'] }),
      bank('CTZIUS33', 'Citizens Bank, N.A.', 'Citizens', { routingNumbers: ['011500120'] }),
      bank('FTBCUS3C', 'Fifth Third Bank, National Association', 'Fifth Third', { routingNumbers: ['042000314'] }),
      bank('KEYBUS33', 'KeyBank National Association', 'KeyBank', { routingNumbers: ['041001039'] }),
      bank('IRVTUS3N', 'The Bank of New York Mellon', 'BNY', { routingNumbers: ['021000018'] }),
    ],
  },
  PH: {
    country: 'PH',
    source: 'Banks supervised by the Bangko Sentral ng Pilipinas (BSP directory of banks), with the SWIFT BIC each bank publishes.',
    version: '2026-11-23',
    banks: [
      bank('BNORPHMM', 'BDO Unibank, Inc.', 'BDO'),
      bank('BOPIPHMM', 'Bank of the Philippine Islands', 'BPI'),
      bank('MBTCPHMM', 'Metropolitan Bank and Trust Company', 'Metrobank'),
      bank('TLBPPHMM', 'Land Bank of the Philippines', 'LANDBANK'),
      bank('PNBMPHMM', 'Philippine National Bank', 'PNB'),
      bank('SETCPHMM', 'Security Bank Corporation', 'Security Bank'),
      bank('UBPHPHMM', 'Union Bank of the Philippines', 'UnionBank'),
      bank('CHBKPHMM', 'China Banking Corporation', 'China Bank'),
      bank('RCBCPHMM', 'Rizal Commercial Banking Corporation', 'RCBC'),
      bank('DBPHPHMM', 'Development Bank of the Philippines', 'DBP'),
      bank('EWBCPHMM', 'East West Banking Corporation', 'EastWest'),
      bank('AUBKPHMM', 'Asia United Bank Corporation', 'AUB'),
    ],
  },
  VN: {
    country: 'VN',
    source:
      'Banks licensed by the State Bank of Vietnam, with the SWIFT BIC each bank publishes and its NAPAS bank identification number (the VietQR bank id).',
    version: '2026-11-23',
    banks: [
      bank('BFTVVNVX', 'Joint Stock Commercial Bank for Foreign Trade of Vietnam', 'Vietcombank', { napasBin: '970436' }),
      bank('ICBVVNVX', 'Vietnam Joint Stock Commercial Bank for Industry and Trade', 'VietinBank', { napasBin: '970415' }),
      bank('BIDVVNVX', 'Joint Stock Commercial Bank for Investment and Development of Vietnam', 'BIDV', { napasBin: '970418' }),
      bank('VBAAVNVX', 'Vietnam Bank for Agriculture and Rural Development', 'Agribank', { napasBin: '970405' }),
      bank('VTCBVNVX', 'Vietnam Technological and Commercial Joint Stock Bank', 'Techcombank', { napasBin: '970407' }),
      bank('MSCBVNVX', 'Military Commercial Joint Stock Bank', 'MB', { napasBin: '970422' }),
      bank('ASCBVNVX', 'Asia Commercial Joint Stock Bank', 'ACB', { napasBin: '970416' }),
      bank('VPBKVNVX', 'Vietnam Prosperity Joint Stock Commercial Bank', 'VPBank', { napasBin: '970432' }),
      bank('SGTTVNVX', 'Saigon Thuong Tin Commercial Joint Stock Bank', 'Sacombank', { napasBin: '970403' }),
      bank('TPBVVNVX', 'Tien Phong Commercial Joint Stock Bank', 'TPBank', { napasBin: '970423' }),
      bank('HDBCVNVX', 'Ho Chi Minh City Development Joint Stock Commercial Bank', 'HDBank', { napasBin: '970437' }),
      bank('VNIBVNVX', 'Vietnam International Commercial Joint Stock Bank', 'VIB', { napasBin: '970441' }),
      bank('SHBAVNVX', 'Saigon - Hanoi Commercial Joint Stock Bank', 'SHB', { napasBin: '970443' }),
    ],
  },
};

export function findDirectoryBank(country: BankCountry, bankCode: string): DirectoryBank | undefined {
  return BANK_DIRECTORY[country].banks.find((b) => b.bankCode === bankCode);
}
