// Hand-written parts of atomr-1.vapi (see Atomr-1.metadata).
namespace Atomr {
	public sealed class Operation : GLib.Object {
		[CCode (cname = "atomr_operation_new", has_construct_function = false)]
		public Operation (Atomr.Actor actor, string name, void* source_tag, GLib.Cancellable? cancellable, [CCode (scope = "async")] GLib.AsyncReadyCallback? callback);
	}
}
