import { inflateSync } from "node:zlib";

/**
 * Small, valid PDF files for the documents the sandbox serves (PDF 1.4, the standard Helvetica
 * fonts in WinAnsiEncoding, one uncompressed content stream per page, an exact cross-reference
 * table), and the reverse: the text of a simple PDF, which is how an uploaded file gets indexed.
 */

export interface PdfContent {
  title: string;
  /** Body lines; long ones are wrapped. No lines: a page with a drawing and no text layer, as a scan. */
  lines: readonly string[];
}

const PAGE_WIDTH = 595; // A4 in points
const PAGE_HEIGHT = 842;
const MARGIN = 56;
const LINE_HEIGHT = 14;
const LINES_PER_PAGE = Math.floor((PAGE_HEIGHT - 2 * MARGIN - 30) / LINE_HEIGHT);
const WRAP_AT = 92; // characters of 10 pt Helvetica across the text width

/** The bytes WinAnsiEncoding gives to the characters outside Latin-1 that French text uses. */
const WIN_ANSI: Record<string, number> = {
  "€": 0x80,
  "…": 0x85,
  "‘": 0x91,
  "’": 0x92,
  "“": 0x93,
  "”": 0x94,
  "–": 0x96,
  "—": 0x97,
  Œ: 0x8c,
  œ: 0x9c,
};
const FROM_WIN_ANSI = new Map(Object.entries(WIN_ANSI).map(([char, byte]) => [byte, char]));
/** Characters WinAnsiEncoding lacks, written as their nearest: a narrow space as a space. */
const NEAREST: Record<string, number> = { "\u202f": 0x20, "\u2009": 0x20 };

export function renderPdf(content: PdfContent): { bytes: Buffer; pages: number } {
  const lines = content.lines.flatMap((line) => wrap(line, WRAP_AT));
  const pages: string[][] = [];
  for (let i = 0; i < Math.max(lines.length, 1); i += LINES_PER_PAGE)
    pages.push(lines.slice(i, i + LINES_PER_PAGE));

  // 1 catalog, 2 page tree, 3-4 fonts, 5 info, then a page and its content stream per page.
  const pageIds = pages.map((_, i) => 6 + 2 * i);
  const objects: Buffer[] = [
    ascii("<< /Type /Catalog /Pages 2 0 R >>"),
    ascii(
      `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`,
    ),
    ascii("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"),
    ascii("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"),
    ascii(`<< /Title <${utf16Hex(content.title)}> /Producer (Partner API sandbox) >>`),
  ];
  pages.forEach((pageLines, index) => {
    const stream =
      content.lines.length === 0
        ? scannedPage()
        : textPage(index === 0 ? content.title : null, pageLines);
    objects.push(
      ascii(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] ` +
          `/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${pageIds[index]! + 1} 0 R >>`,
      ),
      Buffer.concat([
        ascii(`<< /Length ${stream.length} >>\nstream\n`),
        stream,
        ascii("\nendstream"),
      ]),
    );
  });

  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "latin1")];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  objects.forEach((body, i) => {
    const object = Buffer.concat([ascii(`${i + 1} 0 obj\n`), body, ascii("\nendobj\n")]);
    offsets.push(length);
    parts.push(object);
    length += object.length;
  });
  const xref = [
    "xref",
    `0 ${objects.length + 1}`,
    "0000000000 65535 f ",
    ...offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n `),
    "trailer",
    `<< /Size ${objects.length + 1} /Root 1 0 R /Info 5 0 R >>`,
    "startxref",
    String(length),
    "%%EOF",
    "",
  ].join("\n");
  parts.push(ascii(xref));
  return { bytes: Buffer.concat(parts), pages: pages.length };
}

function textPage(title: string | null, lines: readonly string[]): Buffer {
  const top = PAGE_HEIGHT - MARGIN;
  const parts: Buffer[] = [ascii("BT\n")];
  if (title !== null) {
    parts.push(ascii(`/F2 14 Tf ${MARGIN} ${top} Td `), literal(title), ascii(" Tj\n"));
    parts.push(ascii(`/F1 10 Tf 0 -30 Td ${LINE_HEIGHT} TL\n`));
  } else {
    parts.push(ascii(`/F1 10 Tf ${MARGIN} ${top} Td ${LINE_HEIGHT} TL\n`));
  }
  lines.forEach((line, i) => {
    parts.push(literal(line), ascii(i === lines.length - 1 ? " Tj\n" : " Tj T*\n"));
  });
  parts.push(ascii("ET"));
  return Buffer.concat(parts);
}

/** A page with shapes and no text operator: what a scanned document looks like to an indexer. */
function scannedPage(): Buffer {
  const bars = Array.from(
    { length: 24 },
    (_, i) => `${MARGIN} ${PAGE_HEIGHT - MARGIN - 20 - i * 28} ${300 + ((i * 37) % 180)} 9 re f`,
  );
  return ascii(`0.35 g\n${bars.join("\n")}`);
}

/**
 * The text of a PDF: the literal strings its content streams show (Tj, TJ, ', "), each on its
 * own line, Flate streams inflated. Null when the file shows no text (a scan, an image, another
 * encoding): the sandbox indexes what a simple text extractor would find, nothing more.
 */
export function pdfText(bytes: Buffer): string | null {
  if (!isPdf(bytes)) return null;
  const source = bytes.toString("latin1");
  const lines: string[] = [];
  for (const match of source.matchAll(/<<(.*?)>>\s*stream\r?\n/gs)) {
    const start = (match.index ?? 0) + match[0].length;
    const end = source.indexOf("endstream", start);
    if (end === -1) continue;
    let stream = bytes.subarray(start, end);
    if (/\/FlateDecode/.test(match[1] ?? "")) {
      try {
        stream = inflateSync(stream);
      } catch {
        continue;
      }
    }
    lines.push(...shownStrings(stream.toString("latin1")));
  }
  const text = lines.join("\n").trim();
  return text === "" ? null : text;
}

export function isPdf(bytes: Buffer): boolean {
  return bytes.subarray(0, 5).toString("latin1") === "%PDF-";
}

function shownStrings(content: string): string[] {
  const out: string[] = [];
  for (const match of content.matchAll(
    /(\[(?:[^\]\\]|\\.)*\]|\((?:[^()\\]|\\.)*\))\s*(Tj|TJ|'|")/gs,
  )) {
    const operand = match[1] ?? "";
    const pieces = operand.startsWith("[")
      ? [...operand.matchAll(/\((?:[^()\\]|\\.)*\)/gs)].map((m) => m[0])
      : [operand];
    out.push(pieces.map((p) => unescapeLiteral(p.slice(1, -1))).join(""));
  }
  return out;
}

function unescapeLiteral(body: string): string {
  const simple: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" };
  const latin1 = body.replace(/\\([0-7]{1,3}|.)/gs, (_, code: string) =>
    /^[0-7]/.test(code) ? String.fromCharCode(Number.parseInt(code, 8)) : (simple[code] ?? code),
  );
  return [...latin1].map((c) => FROM_WIN_ANSI.get(c.charCodeAt(0)) ?? c).join("");
}

/** A PDF literal string in WinAnsiEncoding; characters it cannot show become `?`. */
function literal(text: string): Buffer {
  const bytes: number[] = [0x28];
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0x3f;
    let byte =
      WIN_ANSI[char] ??
      NEAREST[char] ??
      (code <= 0xff && (code < 0x80 || code > 0x9f) ? code : 0x3f);
    if (byte < 0x20) byte = 0x20;
    if (byte === 0x28 || byte === 0x29 || byte === 0x5c) bytes.push(0x5c);
    bytes.push(byte);
  }
  bytes.push(0x29);
  return Buffer.from(bytes);
}

function utf16Hex(text: string): string {
  const utf16 = Buffer.from(text, "utf16le");
  utf16.swap16();
  return `FEFF${utf16.toString("hex").toUpperCase()}`;
}

function ascii(text: string): Buffer {
  return Buffer.from(text, "latin1");
}

function wrap(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const out: string[] = [];
  let current = "";
  for (const word of line.split(" ")) {
    if (current !== "" && current.length + 1 + word.length > width) {
      out.push(current);
      current = word;
    } else current = current === "" ? word : `${current} ${word}`;
  }
  if (current !== "") out.push(current);
  return out;
}
