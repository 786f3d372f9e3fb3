// atomr through Vala and the generated atomr-1.vapi.
int main (string[] args) {
    Test.init (ref args);

    Test.add_func ("/vala/device-count", () => {
        assert (Atomr.Device.get_count () >= 0);
    });

    Test.add_func ("/vala/no-device-error", () => {
        if (Atomr.Device.get_count () > 0) {
            Test.skip ("a CUDA device is present");
            return;
        }
        try {
            Atomr.Device.get (0);
            assert_not_reached ();
        } catch (Atomr.Error.NO_DEVICE e) {
            assert (e.message.contains ("libcuda"));
        } catch (Error e) {
            assert_not_reached ();
        }
    });

    Test.add_func ("/vala/trace-recorder", () => {
        var recorder = new Atomr.TraceRecorder (8);
        assert (recorder.get_n_records () == 0);
        assert ("traceEvents" in recorder.to_json ());
        var info = new Atomr.LaunchInfo ("rng-1", "curand", "fill");
        info.set_times (5, 6, 9);
        recorder.add_record (info);
        var records = recorder.get_records ();
        assert (records.length == 1);
        assert (records[0].get_operation () == "fill");
        try {
            recorder.load_json ("{}", -1);
            assert_not_reached ();
        } catch (Error e) {
            assert (e is Atomr.Error);
        }
    });

    return Test.run ();
}
