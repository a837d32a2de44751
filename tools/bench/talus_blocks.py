#!/usr/bin/env python3
"""Helpers of tools/bench/talus_blocks.sh (the talus side of the blocks benchmark).

usage:
  talus_blocks.py config TEMPLATE STATE_JSON STATE_OBJ LAW RESOLUTION STEPS OUT_TOML [TOL]
      Writes the talus config for one run: TEMPLATE (configs/bench/blocks.toml.in) with the mesh path set to
      STATE_OBJ (absolute), the box's max corner from the state, the model table of LAW (volume | linear),
      block_resolution = RESOLUTION, the output intervals set to STEPS (bodies and contacts written at
      step 0 and at the last step) and one row per block of the state appended to the last [[blocks]]
      table: shape state/block<k>, its velocity and angular velocity (world axes); with TOL (m),
      [run] cell_tolerance = TOL (else the engine's default). Plain python3, no numpy.
      Prints "n=<blocks> law=<state's law> warmup=<state's warm-up steps> time=<state's simulated time>".
  talus_blocks.py count OUT_DIR
      Counts at the last recorded step of a talus run (needs pyarrow): stored and touching (f_n > 0)
      contacts block-block and block-facet, and the blocks' mean and least centroid height and
      translational kinetic energy, as Yade's result line has them. Prints key=value pairs.
"""
import json
import os
import re
import sys


def write_config(template, state_json, state_obj, law, resolution, steps, out_toml, tol=''):
    with open(state_json) as f:
        state = json.load(f)
    text = open(template).read()
    # The model table: keep LAW's block (uncommented), drop the other.
    blocks = re.findall(r'# law: (\w+)\n(.*?)# end law\n', text, flags=re.S)
    laws = {name for name, _ in blocks}
    if law not in laws:
        sys.exit(f'talus_blocks.py: LAW must be one of {sorted(laws)}')

    def keep(m):
        if m.group(1) != law:
            return ''
        return re.sub(r'^# ?', '', m.group(2), flags=re.M) if m.group(2).lstrip().startswith('#') else m.group(2)
    text = re.sub(r'# law: (\w+)\n(.*?)# end law\n', keep, text, flags=re.S)
    subs = [
        (r'^block_resolution = "\w+"', f'block_resolution = "{resolution}"'),
        (r'^path = ".*\.obj"', f'path = "{os.path.abspath(state_obj)}"'),
        (r'^max = \[.*\]', 'max = [%r, %r, %r]' % tuple(state['box']['max'])),
        (r'^min = \[.*\]', 'min = [%r, %r, %r]' % tuple(state['box']['min'])),
        (r'^steps = \d+', f'steps = {steps}'),
        (r'^contacts = \d+', f'contacts = {steps}'),
        (r'^bodies = \d+', f'bodies = {steps}'),
    ]
    for pattern, new in subs:
        text, n = re.subn(pattern, new, text, count=1, flags=re.M)
        if n != 1:
            sys.exit(f'talus_blocks.py: {template} has no line matching {pattern}')
    if tol:
        text = re.sub(r'^(block_resolution = .*)$', r'\1\ncell_tolerance = %r' % float(tol), text, count=1, flags=re.M)
    if state['box'].get('open') != ['+z']:
        sys.exit('talus_blocks.py: the state box is not open at +z only')
    rows = []
    for k, b in enumerate(state['blocks']):
        if b['id'] != k:
            sys.exit(f'talus_blocks.py: block {k} has id {b["id"]}')
        rows.append('  { shape = "state/block%d", velocity = [%r, %r, %r], spin = [%r, %r, %r] },'
                    % ((k,) + tuple(b['velocity']) + tuple(b['angular_velocity'])))
    with open(out_toml, 'w') as f:
        f.write(f'# Written by tools/bench/talus_blocks.py from {template} and {state_json}\n')
        f.write(text.rstrip('\n') + '\nblocks = [\n' + '\n'.join(rows) + '\n]\n')
    case = state['case']
    print(f"n={len(rows)} law={case['law']} warmup={case['warmup_steps']} time={case['time']}")


def count(out_dir):
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    c = ds.dataset(out_dir + '/contacts', format='parquet').to_table(columns=['step', 'kind', 'active', 'f_n'])
    last = pc.max(c['step']).as_py()
    c = c.filter(pc.equal(c['step'], last))
    kind = [str(k) for k in c['kind'].to_pylist()]
    fn = c['f_n'].to_pylist()
    act = c['active'].to_pylist()
    res = {'step': last}
    for name, key in (('block-block', 'bb'), ('block-facet', 'bw')):
        res['stored_' + key] = sum(1 for k in kind if k == name)
        res['active_' + key] = sum(1 for k, a in zip(kind, act) if k == name and a)
        res['contacts_' + key] = sum(1 for k, f in zip(kind, fn) if k == name and f > 0)
    b = ds.dataset(out_dir + '/bodies', format='parquet').to_table(
        columns=['step', 'kind', 'mass', 'z', 'vx', 'vy', 'vz'])
    b = b.filter(pc.equal(b['step'], pc.max(b['step']).as_py()))
    b = b.filter(pc.equal(pc.cast(b['kind'], 'string'), 'block'))
    z = b['z'].to_pylist()
    n = len(z)
    ke = sum(0.5 * m * (vx * vx + vy * vy + vz * vz) for m, vx, vy, vz in
             zip(*(b[k].to_pylist() for k in ('mass', 'vx', 'vy', 'vz'))))
    res.update(contacts_per_block='%.4g' % ((res['contacts_bb'] + res['contacts_bw']) / max(n, 1)),
               mean_z='%.4g' % (sum(z) / max(n, 1)), min_z='%.4g' % min(z), kinetic_j='%.4g' % ke)
    print(' '.join(f'{k}={v}' for k, v in res.items()))


if __name__ == '__main__':
    if len(sys.argv) in (9, 10) and sys.argv[1] == 'config':
        write_config(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == 'count':
        count(sys.argv[2])
    else:
        sys.exit(__doc__)
