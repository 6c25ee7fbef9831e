// SPDX-License-Identifier: MIT
// A span exporter appending OTLP JSON to a file, one ExportTraceServiceRequest
// ({"resourceSpans":[...]}) per line, as the OpenTelemetry collector's file
// exporter writes it. Several tiers may append to one file: each batch is
// one write() of one line on an O_APPEND descriptor, so lines do not mix.
'use strict';

const fs = require('fs');
const { ExportResultCode } = require('@opentelemetry/core');
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');

// The SDK's serializer follows the OTLP JSON mapping (hex ids, camelCase,
// times as strings of nanoseconds, integer kinds) except for intValue, which
// it leaves a JSON number; the collector writes int64 as a string (protobuf
// JSON mapping), so this does too.
function int64AsString(key, value) {
  return key === 'intValue' && typeof value === 'number' ? String(value) : value;
}

class OtlpFileExporter {
  constructor(path) {
    this.path = path;
    this.fd = fs.openSync(path, 'a');
  }

  export(spans, resultCallback) {
    try {
      const request = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)).toString());
      const line = Buffer.from(JSON.stringify(request, int64AsString) + '\n');
      // A regular file takes the whole line at once; loop on a short write anyway.
      for (let off = 0; off < line.length;) off += fs.writeSync(this.fd, line, off);
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error });
    }
  }

  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
    return Promise.resolve();
  }
}

module.exports = { OtlpFileExporter };
