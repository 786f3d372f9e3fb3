// Views through GJS: slicing, errors, uploads and downloads on the host
// test device.
imports.gi.versions.Atomr = '1';
const { Atomr, GLib } = imports.gi;

let failures = 0;
function check(cond, what) {
    print(`${cond ? 'ok' : 'not ok'} - ${what}`);
    if (!cond)
        failures++;
}

const device = Atomr.Device.new_mock();
const t = Atomr.Tensor.empty(device, Atomr.Dtype.F32, [3, 4]);
check(t.get_n_elements() === 12, 'a 3 × 4 tensor has 12 elements');
check(t.get_strides().join(',') === '4,1', 'row-major strides');

const values = new Float32Array(12).map((_, i) => i);
const actor = Atomr.CopyActor.new(device);
check(actor.upload_tensor_sync(t, new GLib.Bytes(new Uint8Array(values.buffer)), null), 'upload');

const col = t.slice(1, 1, 3, 1).transpose(0, 1);   // columns 1..2 as rows
check(col.get_shape().join(',') === '2,3', 'sliced and transposed shape');
const bytes = actor.download_tensor_sync(col, null);
const got = new Float32Array(bytes.toArray().buffer);
check(got.join(',') === '1,5,9,2,6,10', `strided download ${got.join(',')}`);

try {
    t.reshape([5, 5]);
    check(false, 'a wrong reshape throws');
} catch (e) {
    check(e.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT), 'INVALID_ARGUMENT for a wrong reshape');
}
check(new Atomr.Tensor().to_string() === 'empty tensor (no buffer)', 'a bare tensor is safe');

if (failures > 0)
    imports.system.exit(1);
