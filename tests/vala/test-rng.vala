// The RNG actor through Vala's async/yield and the generated vapi, on the
// public mock device (argument checks, NOT_SUPPORTED) and, when there is
// one, on the GPU (a uniform fill lands in (0, 1]).

Error? fill_and_wait (Atomr.RngActor rng, Atomr.Buffer buffer, Atomr.RngDistribution dist,
                      double p1, double p2) {
    var loop = new MainLoop ();
    Error? failure = null;
    rng.fill_async.begin (buffer, dist, p1, p2, null, (obj, res) => {
        try {
            rng.fill_async.end (res);
        } catch (Error e) {
            failure = e;
        }
        loop.quit ();
    });
    loop.run ();
    return failure;
}

int main (string[] args) {
    Test.init (ref args);

    Test.add_func ("/vala/rng/mock", () => {
        var device = new Atomr.Device.mock ();
        assert (device.is_mock ());
        try {
            var rng = new Atomr.RngActor (device, Atomr.RngKind.PHILOX);
            var f32 = new Atomr.Buffer (device, Atomr.Dtype.F32, 15);
            var e = fill_and_wait (rng, f32, Atomr.RngDistribution.NORMAL, 0, 1);
            assert (e is Atomr.Error.INVALID_ARGUMENT);
            assert ("must be even" in e.message);
            var f32_even = new Atomr.Buffer (device, Atomr.Dtype.F32, 16);
            e = fill_and_wait (rng, f32_even, Atomr.RngDistribution.NORMAL, 0, 1);
            assert (e is Atomr.Error.NOT_SUPPORTED);
            rng.seed = 7;
            assert (rng.get_seed () == 7);
        } catch (Error e) {
            error ("%s", e.message);
        }
    });

    Test.add_func ("/vala/rng/gpu", () => {
        if (Atomr.Device.get_count () == 0) {
            Test.skip ("no CUDA device");
            return;
        }
        try {
            var device = Atomr.Device.get (0);
            var rng = new Atomr.RngActor (device, Atomr.RngKind.XORWOW);
            var buf = new Atomr.Buffer (device, Atomr.Dtype.F32, 1024);
            assert (fill_and_wait (rng, buf, Atomr.RngDistribution.UNIFORM, 0, 0) == null);
            var bytes = buf.download_sync (null);
            unowned float[] xs = (float[]) bytes.get_data ();
            for (int i = 0; i < 1024; i++)
                assert (xs[i] > 0 && xs[i] <= 1);
        } catch (Error e) {
            error ("%s", e.message);
        }
    });

    return Test.run ();
}
