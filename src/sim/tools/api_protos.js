// Loads the real API definitions (GKE cluster_service.proto, Compute
// compute.proto) from the npm packages installed by scripts/setup.sh into
// .deps/npm, with protobufjs (a dependency of google-gax). Shared by the
// schema generator and the conformance test.
'use strict';
const fs = require('fs');
const path = require('path');

function npmRoot(sourceDir) {
  return path.join(sourceDir, '.deps', 'npm', 'node_modules');
}

function load(sourceDir) {
  const nm = npmRoot(sourceDir);
  const protobuf = require(path.join(nm, 'protobufjs'));
  const dirs = [
    path.join(nm, '@google-cloud/container/build/protos'),
    path.join(nm, '@google-cloud/compute/build/protos'),
    path.join(nm, 'google-gax/build/protos'),
    path.join(nm, 'protobufjs'),
  ];
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => {
    if (path.isAbsolute(target)) return target;
    for (const d of dirs) {
      const p = path.join(d, target);
      if (fs.existsSync(p)) return p;
    }
    return target;
  };
  root.loadSync(['google/container/v1/cluster_service.proto',
                 'google/cloud/compute/v1/compute.proto'],
                {keepCase: false, alternateCommentMode: true});
  root.resolveAll();
  return {root, protobuf};
}

// Compute models enums as `optional string` fields whose comment says
// "Check the X enum for the list of possible values."; returns that enum.
function stringEnumOf(field) {
  if (field.type !== 'string' || !field.comment) return null;
  const m = /Check the (\w+) enum for the list of possible values/.exec(field.comment);
  if (!m) return null;
  try { return field.parent.lookupEnum(m[1]); } catch (e) { return null; }
}

// An enum's values. Compute lists some real values only in the enum's comment
// ("Additional supported values which may be not listed in the enum directly
// due to technical reasons:" followed by one name per line); they count too.
function enumValues(e) {
  const values = new Set(Object.keys(e.values));
  const c = e.comment || '';
  const at = c.indexOf('Additional supported values');
  if (at >= 0) {
    for (const line of c.slice(at).split('\n').slice(1)) {
      const v = line.trim();
      if (/^[A-Z][A-Z0-9_]*$/.test(v)) values.add(v);
      else if (v) break;
    }
  }
  return values;
}

// The proto3 JSON name: json_name when given, else lowerCamelCase of the name.
// protobufjs with keepCase=false already stores fields camelCased.
function protoName(field) {
  return field.name.replace(/[A-Z]/g, c => '_' + c.toLowerCase());
}

// Every HTTP binding of every RPC in the two services: {verb, template, body,
// method}.
function httpBindings(root) {
  const out = [];
  const services = [root.lookupService('google.container.v1.ClusterManager')];
  const computeNs = root.lookup('google.cloud.compute.v1');
  for (const n of Object.values(computeNs.nested)) {
    if (n.methods) services.push(n);
  }
  for (const svc of services) {
    for (const m of Object.values(svc.methods)) {
      m.resolve();
      const rules = [];
      for (const opt of (m.parsedOptions || [])) {
        const h = opt['(google.api.http)'];
        if (!h) continue;
        rules.push(h);
        let extra = h.additional_bindings;
        if (extra) for (const e of (Array.isArray(extra) ? extra : [extra])) rules.push(e);
      }
      for (const r of rules) {
        for (const verb of ['get', 'put', 'post', 'delete', 'patch']) {
          if (r[verb]) out.push({verb: verb.toUpperCase(), template: r[verb], body: r.body || '', method: m});
        }
      }
    }
  }
  return out;
}

module.exports = {load, stringEnumOf, enumValues, protoName, httpBindings, npmRoot};
