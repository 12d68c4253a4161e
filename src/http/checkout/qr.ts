import QRCode from 'qrcode';

/**
 * The QR code of an EIP-681 URI as an SVG document, made on the server (the `qrcode` package): no
 * script draws it, and the SVG has no style attributes, so the page's CSP needs nothing extra for it.
 * Error correction M: readable from a phone screen with a little glare.
 */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
