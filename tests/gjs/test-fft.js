// The FFT actor and plans through GJS: each layout array of
// FftPlan.new_many carries its own length (issue 11), and the actor on the
// public mock device validates and answers NOT_SUPPORTED.  With a GPU, one
// transform of a constant signal is checked too.
imports.gi.versions.Atomr = '1';
const { Atomr, GLib } = imports.gi;

let failures = 0;
function check(cond, what) {
    print(`${cond ? 'ok' : 'not ok'} - ${what}`);
    if (!cond)
        failures++;
}

function expectPlanError(needle, make) {
    try {
        make();
        check(false, `plan fails mentioning "${needle}"`);
    } catch (e) {
        check(e instanceof GLib.Error && e.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT) &&
              e.message.includes(needle), `plan fails mentioning "${needle}" (${e.message})`);
    }
}

function run(start, finish) {
    const loop = new GLib.MainLoop(null, false);
    let value, error;
    start((source, result) => {
        try {
            value = finish(result);
        } catch (e) {
            error = e;
        }
        loop.quit();
    });
    loop.run();
    if (error)
        throw error;
    return value;
}

const C2C = Atomr.FftKind.C2C, F32 = Atomr.Dtype.F32;
expectPlanError('inembed has 1 entries but n has 2',
    () => Atomr.FftPlan.new_many(C2C, F32, [4, 8], [4], 1, 32, null, 1, 1, 1));
expectPlanError('inembed has 3 entries but n has 1',
    () => Atomr.FftPlan.new_many(C2C, F32, [4], [4, 10, 12], 1, 4, null, 1, 1, 1));
expectPlanError('input layout overflows',
    () => Atomr.FftPlan.new_many(C2C, F32, [5], [5], 2 ** 62, 1, null, 1, 1, 1));
const strided = Atomr.FftPlan.new_many(C2C, F32, [8], [8], 5, 1, [8], 1, 8, 5);
check(strided.get_input_elements() === 40, 'five interleaved signals of 8 need 40 elements');

const mock = Atomr.Device.new_mock();
const fft = Atomr.FftActor.new(mock);
const z = Atomr.Buffer.new(mock, Atomr.Dtype.C64, 16);
try {
    run(cb => fft.execute_async(null, Atomr.FftDirection.FORWARD, z, z, null, cb),
        r => fft.execute_finish(r));
    check(false, 'the mock device answers NOT_SUPPORTED');
} catch (e) {
    check(e.matches(Atomr.error_quark(), Atomr.Error.NOT_SUPPORTED), `mock: ${e.message}`);
}

if (Atomr.Device.get_count() > 0) {
    const device = Atomr.Device.get(0);
    const gpu = Atomr.FftActor.new(device);
    const n = 32;
    const input = Atomr.Buffer.new(device, Atomr.Dtype.C64, n);
    const data = new Float32Array(2 * n);
    for (let i = 0; i < n; i++)
        data[2 * i] = 1;
    input.upload_sync(new GLib.Bytes(new Uint8Array(data.buffer)), null);
    const output = Atomr.Buffer.new(device, Atomr.Dtype.C64, n);
    run(cb => gpu.execute_async(null, Atomr.FftDirection.FORWARD, input, output, null, cb),
        r => gpu.execute_finish(r));
    const bytes = output.download_sync(null).toArray();
    const spectrum = new Float32Array(bytes.buffer, bytes.byteOffset, 2 * n);
    check(Math.abs(spectrum[0] - n) < 1e-4, `DC bin of a constant is ${spectrum[0]}`);
    let rest = 0;
    for (let i = 2; i < 2 * n; i++)
        rest = Math.max(rest, Math.abs(spectrum[i]));
    check(rest < 1e-4, `other bins vanish (max ${rest})`);
}

if (failures > 0)
    imports.system.exit(1);
