// SPDX-License-Identifier: MIT
// Validate every Kubernetes manifest (*.yaml, several documents each) of
// the folders given against the Kubernetes API schema, offline: the
// pinned kubernetes-models package (package-lock.json) holds the
// OpenAPI schemas. Also checks what the schema leaves to the API server:
// object names as DNS labels (Service: DNS-1035), label values, and
// ConfigMap keys as environment names. Prints one line per object and
// exits 1 on the first folder with an invalid one.
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

const KINDS = {
  'v1/ConfigMap': () => require('kubernetes-models/v1').ConfigMap,
  'v1/Service': () => require('kubernetes-models/v1').Service,
  'apps/v1/Deployment': () => require('kubernetes-models/apps/v1').Deployment,
};
const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ENVNAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

function checkNames(obj) {
  const m = obj.metadata || {};
  const name = m.name || '';
  const re = obj.kind === 'Service' ? DNS1035 : DNS1123;
  if (!re.test(name) || name.length > (obj.kind === 'ConfigMap' ? 253 : 63))
    throw new Error(`metadata.name ${JSON.stringify(name)} is not a valid ${obj.kind} name`);
  if (m.namespace !== undefined && (!DNS1123.test(m.namespace) || m.namespace.length > 63))
    throw new Error(`metadata.namespace ${JSON.stringify(m.namespace)} is not a DNS-1123 label`);
  for (const [k, v] of Object.entries(m.labels || {}))
    if (!LABEL.test(v) || v.length > 63)
      throw new Error(`label ${k}=${JSON.stringify(v)} is not a valid label value`);
  if (obj.kind === 'ConfigMap')
    for (const k of Object.keys(obj.data || {}))
      if (!ENVNAME.test(k)) throw new Error(`ConfigMap key ${JSON.stringify(k)} is no env name`);
  if (obj.kind === 'Deployment') {
    const sel = obj.spec.selector.matchLabels, tpl = obj.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(sel))
      if (tpl[k] !== v) throw new Error(`selector ${k}=${v} does not match the pod template`);
  }
}

function validateFile(file) {
  const docs = yaml.loadAll(fs.readFileSync(file, 'utf8'), null, { schema: yaml.CORE_SCHEMA });
  let n = 0;
  for (const doc of docs) {
    if (doc === null || doc === undefined) continue;
    const key = `${doc.apiVersion}/${doc.kind}`;
    if (!KINDS[key]) throw new Error(`${file}: unexpected object ${key}`);
    const Model = KINDS[key]();
    try {
      new Model(doc).validate();
      checkNames(doc);
    } catch (e) {
      throw new Error(`${file}: ${doc.kind} ${doc.metadata && doc.metadata.name}: ${e.message}`);
    }
    console.log(`valid ${doc.kind} ${doc.metadata.namespace}/${doc.metadata.name}`);
    n++;
  }
  return n;
}

let total = 0;
try {
  for (const dir of process.argv.slice(2)) {
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
    if (!files.length) throw new Error(`${dir}: no manifest`);
    for (const f of files) total += validateFile(path.join(dir, f));
  }
} catch (e) {
  console.error(`invalid: ${e.message}`);
  process.exit(1);
}
console.log(`${total} objects valid`);
