#!/usr/bin/env node
// Conformance of the cloud emulator with the real APIs: reads the JSON lines
// the emulator recorded (method, path, query, status, request, response) and
// checks each exchange against the real message definitions in the npm
// packages @google-cloud/container and @google-cloud/compute:
//  - a successful exchange must match a real HTTP binding (google.api.http);
//  - its request body must fit the request message (or its body field), its
//    query parameters must be fields of the request message;
//  - every response body must fit the response message: no field the real
//    message lacks, every enum value (Compute string enums included) real,
//    64-bit integers as strings, as proto3 JSON has them;
//  - error bodies must have the Google error shape.
//   node tests/sim/conformance.js SOURCE_DIR RECORD.jsonl
'use strict';
const fs = require('fs');
const path = require('path');

const sourceDir = process.argv[2];
const recordFile = process.argv[3];
const api = require(path.join(sourceDir, 'src/sim/tools/api_protos.js'));
const {root, protobuf} = api.load(sourceDir);

// Binding templates → regular expressions over the path.
function compile(template) {
  let re = '';
  let i = 0;
  while (i < template.length) {
    if (template[i] === '{') {
      const end = template.indexOf('}', i);
      const inner = template.slice(i + 1, end);
      const eq = inner.indexOf('=');
      if (eq < 0) re += '[^/]+';
      else re += inner.slice(eq + 1).split('/').map(s => s === '*' ? '[^/]+' : s === '**' ? '.+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('/');
      i = end + 1;
    } else {
      re += template[i].replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      i++;
    }
  }
  return new RegExp('^' + re + '$');
}
const bindings = api.httpBindings(root).map(b => Object.assign(b, {re: compile(b.template)}));

const GOOGLE_CODES = new Set(['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED',
  'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION',
  'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED']);
const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function checkValue(v, field, at, out, strict) {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) return checkMessage(v, t, at, out, strict);
  if (t instanceof protobuf.Enum) {
    if (typeof v !== 'string' || !api.enumValues(t).has(v)) out.push(`${at}: ${JSON.stringify(v)} is not a value of ${t.fullName}`);
    return;
  }
  const se = api.stringEnumOf(field);
  if (se) {
    if (typeof v !== 'string' || !api.enumValues(se).has(v)) out.push(`${at}: ${JSON.stringify(v)} is not a value of ${se.fullName}`);
    return;
  }
  const ft = field.type;
  if (ft === 'string' || ft === 'bytes') {
    if (typeof v !== 'string') out.push(`${at}: expected a string, got ${JSON.stringify(v)}`);
  } else if (ft === 'bool') {
    if (typeof v !== 'boolean') out.push(`${at}: expected a bool, got ${JSON.stringify(v)}`);
  } else if (INT64.has(ft)) {
    if (strict ? typeof v !== 'string' || !/^-?\d+$/.test(v) : !(Number.isInteger(v) || /^-?\d+$/.test(v)))
      out.push(`${at}: ${ft} must be ${strict ? 'a decimal string' : 'an integer'} in JSON, got ${JSON.stringify(v)}`);
  } else if (INT32.has(ft)) {
    if (!Number.isInteger(v)) out.push(`${at}: expected an integer, got ${JSON.stringify(v)}`);
  } else if (ft === 'double' || ft === 'float') {
    if (typeof v !== 'number') out.push(`${at}: expected a number, got ${JSON.stringify(v)}`);
  }
}

const WELL_KNOWN = {
  '.google.protobuf.Duration': v => typeof v === 'string' && /^-?\d+(\.\d+)?s$/.test(v),
  '.google.protobuf.Timestamp': v => typeof v === 'string',
  '.google.protobuf.Empty': v => v && typeof v === 'object' && Object.keys(v).length === 0,
};

function checkMessage(v, type, at, out, strict) {
  const wk = WELL_KNOWN[type.fullName];
  if (wk) { if (!wk(v)) out.push(`${at}: not a valid ${type.fullName}: ${JSON.stringify(v)}`); return; }
  if (type.fullName.startsWith('.google.protobuf.')) return;  // Struct, Any, wrappers: free-form
  if (v === null || typeof v !== 'object' || Array.isArray(v)) { out.push(`${at}: expected an object of ${type.fullName}`); return; }
  for (const [key, value] of Object.entries(v)) {
    // Responses use the JSON (lowerCamelCase) names only; requests may use either.
    const field = type.fields[key] || (!strict && Object.values(type.fields).find(f => api.protoName(f) === key));
    if (!field) { out.push(`${at}.${key}: no such field in ${type.fullName}`); continue; }
    field.resolve();
    const p = `${at}.${key}`;
    if (value === null) continue;
    if (field.map) {
      if (typeof value !== 'object' || Array.isArray(value)) { out.push(`${p}: expected a map`); continue; }
      for (const [k, e] of Object.entries(value)) checkValue(e, field, `${p}[${k}]`, out, strict);
    } else if (field.repeated) {
      if (!Array.isArray(value)) { out.push(`${p}: expected a list`); continue; }
      value.forEach((e, i) => checkValue(e, field, `${p}[${i}]`, out, strict));
    } else {
      checkValue(value, field, p, out, strict);
    }
  }
}

function checkError(body, status, out) {
  const e = body && body.error;
  if (!e || typeof e !== 'object') { out.push('error body: missing "error" object'); return; }
  for (const k of Object.keys(body)) if (k !== 'error') out.push(`error body: unexpected top-level key ${k}`);
  if (e.code !== status) out.push(`error.code ${e.code} != HTTP ${status}`);
  if (typeof e.message !== 'string' || !e.message) out.push('error.message: missing');
  if (!GOOGLE_CODES.has(e.status)) out.push(`error.status: ${JSON.stringify(e.status)} is not a google.rpc.Code name`);
  for (const k of Object.keys(e)) if (!['code', 'message', 'status', 'errors', 'details'].includes(k)) out.push(`error.${k}: unexpected`);
  for (const x of (e.errors || [])) {
    for (const k of Object.keys(x)) if (!['message', 'domain', 'reason', 'location', 'locationType'].includes(k)) out.push(`error.errors[].${k}: unexpected`);
    if (typeof x.reason !== 'string' || typeof x.message !== 'string') out.push('error.errors[]: reason and message required');
  }
}

function bodyType(binding) {
  const req = binding.method.resolvedRequestType;
  if (binding.body === '*') return {type: req, at: req.fullName};
  if (!binding.body) return null;
  const f = Object.values(req.fields).find(x => api.protoName(x) === binding.body);
  f.resolve();
  return {type: f.resolvedType, at: binding.body};
}

const lines = fs.readFileSync(recordFile, 'utf8').split('\n').filter(Boolean);
const problems = new Map();  // message → count, so one bug is reported once
const routes = new Set();
let checked = 0;
for (const line of lines) {
  const x = JSON.parse(line);
  const out = [];
  const ok = x.status >= 200 && x.status < 300;
  const b = bindings.find(b => b.verb === x.method && b.re.test(x.path));
  if (!b) {
    if (ok) out.push(`no real API route for ${x.method} ${x.path}`);
  } else {
    routes.add(`${b.verb} ${b.template}`);
    if (ok) {
      const bt = bodyType(b);
      // Google's REST transport sends "" or {} on routes without a body.
      const hasBody = x.request !== null && x.request !== '' &&
                      !(typeof x.request === 'object' && Object.keys(x.request).length === 0);
      if (bt && hasBody) checkMessage(x.request, bt.type, 'request', out, false);
      else if (!bt && hasBody) out.push('request: this route takes no body');
      const req = b.method.resolvedRequestType;
      // $alt, $prettyPrint, … are system parameters every Google API takes.
      for (const q of Object.keys(x.query || {}).filter(q => !q.startsWith('$')))
        if (!req.fields[q] && !Object.values(req.fields).find(f => api.protoName(f) === q))
          out.push(`query parameter ${q}: no such field in ${req.fullName}`);
      checkMessage(x.response, b.method.resolvedResponseType, 'response', out, true);
    }
  }
  if (!ok) checkError(x.response, x.status, out);
  for (const p of out) {
    const key = `${x.method} ${x.path.replace(/operation-[0-9a-f-]+/g, 'operation-…')} (${x.status}): ${p}`;
    problems.set(key, (problems.get(key) || 0) + 1);
  }
  checked++;
}

for (const [p, n] of problems) console.log(`FAIL ${p}${n > 1 ? ` [x${n}]` : ''}`);
console.log(`conformance: ${checked} exchanges over ${routes.size} real routes checked against the API protos`);
for (const r of [...routes].sort()) console.log(`  route ${r}`);
if (checked === 0) { console.log('conformance: nothing was recorded'); process.exit(1); }
console.log(`${problems.size} distinct problems`);
process.exit(problems.size ? 1 : 0);
