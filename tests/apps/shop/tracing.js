// SPDX-License-Identifier: MIT
// OpenTelemetry set-up of every shop tier, loaded before the tier's own code
// (`node -r ./tracing.js front.js`) so that the instrumentations patch http,
// express, ioredis and memcached before the tier requires them.
//
// Environment:
//   SERVICE_NAME         service.name of the tier's spans (front/back/audit)
//   OTEL_SAMPLE_RATIO    if set, parent-based TraceIdRatio sampling (else AlwaysOn)
//   OTLP_FILE            append OTLP JSON, one {"resourceSpans":[...]} per line
//   OTLP_HTTP_URL        OTLP/HTTP protobuf exporter
//   OTLP_HTTP_JSON_URL   OTLP/HTTP JSON exporter
//   ZIPKIN_URL           Zipkin v2 JSON exporter
// Each exporter gets its own BatchSpanProcessor; several may be enabled.
'use strict';

const { context } = require('@opentelemetry/api');
const { suppressTracing } = require('@opentelemetry/core');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const {
  AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler,
} = require('@opentelemetry/sdk-trace-base');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express');
const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis');
const { MemcachedInstrumentation } = require('@opentelemetry/instrumentation-memcached');
const { OtlpFileExporter } = require('./otlp_file_exporter');

// The readiness probe of tests/graph/shop.py; its requests are no part of
// the service graph, so they leave no spans (and no child spans either: an
// ignored request runs with tracing suppressed).
const READY_PATH = '/ready';

function sampler() {
  const ratio = process.env.OTEL_SAMPLE_RATIO;
  if (ratio === undefined || ratio === '') return new AlwaysOnSampler();
  const r = Number(ratio);
  if (!(r >= 0 && r <= 1)) throw new Error(`OTEL_SAMPLE_RATIO=${ratio}: not a number in [0, 1]`);
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(r) });
}

function exporters() {
  const env = process.env;
  const out = [];
  if (env.OTLP_FILE) out.push(new OtlpFileExporter(env.OTLP_FILE));
  if (env.OTLP_HTTP_URL) {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
    out.push(new OTLPTraceExporter({ url: env.OTLP_HTTP_URL }));
  }
  if (env.OTLP_HTTP_JSON_URL) {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
    out.push(new OTLPTraceExporter({ url: env.OTLP_HTTP_JSON_URL }));
  }
  if (env.ZIPKIN_URL) {
    const { ZipkinExporter } = require('@opentelemetry/exporter-zipkin');
    out.push(new ZipkinExporter({ url: env.ZIPKIN_URL }));
  }
  return out;
}

const serviceName = process.env.SERVICE_NAME;
if (!serviceName) throw new Error('SERVICE_NAME is not set');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': serviceName }),
  sampler: sampler(),
  spanProcessors: exporters().map((e) => new BatchSpanProcessor(e)),
});
provider.register();

registerInstrumentations({
  tracerProvider: provider,
  instrumentations: [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => req.url === READY_PATH,
    }),
    new ExpressInstrumentation(),
    new IORedisInstrumentation(),
    new MemcachedInstrumentation(),
  ],
});

// A test stops a tier by PID with SIGTERM and expects its last spans: the
// processors flush on shutdown. A stuck exporter must not keep the process
// alive forever, so the exit is forced after FLUSH_TIMEOUT_MS (status 1).
const FLUSH_TIMEOUT_MS = 5000;
let stopping = false;
function stop(signal) {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    process.stderr.write(`${serviceName}: spans not flushed ${FLUSH_TIMEOUT_MS} ms after ${signal}\n`);
    process.exit(1);
  }, FLUSH_TIMEOUT_MS);
  provider.shutdown().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${serviceName}: flushing spans failed: ${err && err.message}\n`);
      process.exit(1);
    });
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

// For a tier's own set-up work (seeding keys), which is no request's work.
module.exports = {
  READY_PATH,
  untraced: (fn) => context.with(suppressTracing(context.active()), fn),
};
