// atomr through GJS: devices, the error domain, the trace recorder.
imports.gi.versions.Atomr = '1';
const { Atomr, GLib } = imports.gi;

let failures = 0;
function check(cond, what) {
    if (cond) {
        print(`ok - ${what}`);
    } else {
        print(`not ok - ${what}`);
        failures++;
    }
}

check(Atomr.Device.get_count() >= 0, 'device count never fails');

if (Atomr.Device.get_count() === 0) {
    try {
        Atomr.Device.get(0);
        check(false, 'get(0) throws without a driver');
    } catch (e) {
        check(e instanceof GLib.Error, 'NO_DEVICE is a GLib.Error');
        check(e.matches(Atomr.error_quark(), Atomr.Error.NO_DEVICE), 'code is Atomr.Error.NO_DEVICE');
    }
} else {
    const device = Atomr.Device.get(0);
    check(device.get_name().length > 0, `device 0 is ${device.get_name()}`);
}

const recorder = Atomr.TraceRecorder.new(32);
const doc = JSON.parse(recorder.to_json());
check(Array.isArray(doc.traceEvents) && doc.traceEvents.every(e => e.ph === 'M'), 'empty trace exports');
check(doc.otherData['atomr-trace-version'] === 2, 'contract version 2');

const info = Atomr.LaunchInfo.new('fft-1', 'cufft', 'execute');
info.set_times(10, 20, 70);
info.set_timestamp(Atomr.LaunchEvent.GPU_START, 30500);
info.set_timestamp(Atomr.LaunchEvent.GPU_END, 60250);
recorder.add_record(info);
const events = JSON.parse(recorder.to_json()).traceEvents;
const gpu = events.filter(e => e.ph === 'X');
check(gpu.length === 1 && Math.abs(gpu[0].dur - 29.75) < 1e-9 && Math.abs(gpu[0].ts - 20.5) < 1e-9,
    'GPU time exports as a complete event in fractional microseconds');
check(events.filter(e => e.cat === 'host').map(e => e.ph).join('') === 'bnne',
    'host lifecycle exports as async events');

try {
    recorder.load_json('[{"ph":"X"}]', -1);
    check(false, 'malformed trace rejected');
} catch (e) {
    check(e.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT), 'malformed trace rejected with INVALID_ARGUMENT');
}

check(Atomr.dtype_get_size(Atomr.Dtype.C64) === 8, 'dtype sizes');

if (failures > 0)
    imports.system.exit(1);
