// Bare objects and signal arguments from GJS.
//
// 1. Every Atomr object type built with `new Atomr.X()` (no properties,
//    bypassing the C constructors) survives every method that takes only
//    simple arguments: it works on the empty object or throws a GLib.Error.
//    G_DEBUG=fatal-criticals (test env) turns any g_return_if_fail into a
//    failure.
// 2. A launch info kept by a signal handler stays valid after the emission
//    (the actor signals used G_SIGNAL_TYPE_STATIC_SCOPE, so GJS wrapped the
//    emitter's pointer without a reference and read freed memory later).
imports.gi.versions.Atomr = '1';
imports.gi.versions.GIRepository = '2.0';
const { Atomr, GIRepository, GLib } = imports.gi;
const System = imports.system;

let failures = 0;
function check(cond, what) {
    print(`${cond ? 'ok' : 'not ok'} - ${what}`);
    if (!cond)
        failures++;
}

const repo = GIRepository.Repository.get_default();
const T = GIRepository.TypeTag;
const simple = new Map([
    [T.BOOLEAN, false], [T.INT32, 1], [T.UINT32, 1], [T.INT64, 1], [T.UINT64, 1],
    [T.INT8, 1], [T.UINT8, 1], [T.INT16, 1], [T.UINT16, 1], [T.DOUBLE, 1.0], [T.FLOAT, 1.0],
    [T.UTF8, 'x'],
]);

// Arguments for @m, or null when it needs something this test does not make.
function argsFor(m) {
    const values = [];
    // GJS passes the length of an array itself: those arguments are hidden.
    const lengths = new Set();
    for (let k = 0; k < GIRepository.callable_info_get_n_args(m); k++) {
        const ti = GIRepository.arg_info_get_type(GIRepository.callable_info_get_arg(m, k));
        if (GIRepository.type_info_get_tag(ti) === T.ARRAY &&
            GIRepository.type_info_get_array_length(ti) >= 0)
            lengths.add(GIRepository.type_info_get_array_length(ti));
    }
    for (let k = 0; k < GIRepository.callable_info_get_n_args(m); k++) {
        const a = GIRepository.callable_info_get_arg(m, k);
        if (GIRepository.arg_info_get_direction(a) === GIRepository.Direction.OUT || lengths.has(k))
            continue;
        const ti = GIRepository.arg_info_get_type(a);
        const tag = GIRepository.type_info_get_tag(ti);
        if (GIRepository.arg_info_may_be_null(a))
            values.push(null);
        else if (simple.has(tag))
            values.push(simple.get(tag));
        else if (tag === T.INTERFACE) {
            const iface = GIRepository.type_info_get_interface(ti);
            const kind = iface.get_type();
            if (kind === GIRepository.InfoType.ENUM || kind === GIRepository.InfoType.FLAGS)
                values.push(0);
            else
                return null;
        } else {
            return null;
        }
    }
    return values;
}

let nCalls = 0;
for (let i = 0; i < repo.get_n_infos('Atomr'); i++) {
    const info = repo.get_info('Atomr', i);
    if (info.get_type() !== GIRepository.InfoType.OBJECT || GIRepository.object_info_get_abstract(info))
        continue;
    const name = info.get_name();
    let crashedOn = null;
    for (let owner = info; owner && owner.get_namespace() === 'Atomr';
        owner = GIRepository.object_info_get_parent(owner)) {
        for (let k = 0; k < GIRepository.object_info_get_n_methods(owner); k++) {
            const m = GIRepository.object_info_get_method(owner, k);
            const method = m.get_name();
            if (!(GIRepository.function_info_get_flags(m) & GIRepository.FunctionInfoFlags.IS_METHOD) ||
                method.endsWith('_async') || method.endsWith('_finish') ||
                method === 'save' || method === 'load')
                continue;
            const args = argsFor(m);
            if (args === null)
                continue;
            const obj = new Atomr[name]();
            if (typeof obj[method] !== 'function')
                continue;   // shadowed by a property of the same name
            try {
                obj[method](...args);
            } catch (e) {
                if (!(e instanceof GLib.Error))
                    crashedOn = `${method}: ${e}`;
            }
            nCalls++;
        }
    }
    check(crashedOn === null, `bare Atomr.${name}: every simple method works or throws a GLib.Error${crashedOn ? ` (${crashedOn})` : ''}`);
}
check(nCalls > 100, `${nCalls} methods called on bare objects`);

// A bare actor's request fails with a GLib.Error through its callback.
{
    const actor = new Atomr.CopyActor();
    const loop = new GLib.MainLoop(null, false);
    let message = null;
    actor.barrier_async(null, (source, result) => {
        try {
            source.barrier_finish(result);
        } catch (e) {
            message = e.message;
        }
        loop.quit();
    });
    loop.run();
    check(message !== null && message.includes('constructed without a device'),
        'a bare actor answers a request with an error');
    const device = new Atomr.Device();
    let threw = false;
    try {
        device.synchronize();
    } catch (e) {
        threw = e instanceof GLib.Error;
    }
    check(threw, 'a bare device throws instead of crashing');
}

// 2. Keep the launch info of a signal past its emission.
{
    const actor = new Atomr.CopyActor();
    let kept = null;
    actor.connect('after-complete', (_actor, info) => {
        kept = info;
    });
    let info = Atomr.LaunchInfo.new('kept-actor', 'cuda', 'kept-operation');
    info.set_sequence(42);
    actor.emit('after-complete', info);
    info = null;
    // Drop every other reference: the emitter's copy is gone after this.
    System.gc();
    System.gc();
    // Churn the allocator so freed memory would be reused.
    for (let i = 0; i < 2000; i++)
        Atomr.LaunchInfo.new(`x${i}`, 'y', 'z').set_detail('w'.repeat(i % 64));
    System.gc();
    check(kept !== null && kept.get_operation() === 'kept-operation' &&
        kept.get_actor_name() === 'kept-actor' && kept.get_sequence() === 42,
    'a launch info kept by a handler is still valid after the emission');
}

if (Atomr.Device.get_count() > 0) {
    // On a GPU: the same with a real operation of a real actor.
    const device = Atomr.Device.get(0);
    const actor = Atomr.CopyActor.new(device);
    const buffer = Atomr.Buffer.new(device, Atomr.Dtype.F32, 256);
    const kept = [];
    actor.connect('after-complete', (_actor, info) => kept.push(info));
    const loop = new GLib.MainLoop(null, false);
    actor.fill_async(buffer, 1.0, null, (source, result) => {
        source.fill_finish(result);
        loop.quit();
    });
    loop.run();
    System.gc();
    check(kept.length === 1 && kept[0].get_operation() === 'fill' && kept[0].get_error() === null,
        'GPU: the launch info of a fill is still valid after the reply');
}

if (failures > 0)
    System.exit(1);
