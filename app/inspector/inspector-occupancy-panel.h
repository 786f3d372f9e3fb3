/* inspector-occupancy-panel.h — the Resources tab of the Cache page
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "inspector-occupancy.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_OCCUPANCY_PANEL (inspector_occupancy_panel_get_type ())
G_DECLARE_FINAL_TYPE (InspectorOccupancyPanel, inspector_occupancy_panel, INSPECTOR, OCCUPANCY_PANEL, GtkWidget)

GtkWidget                *inspector_occupancy_panel_new            (void);
void                      inspector_occupancy_panel_set_resources  (InspectorOccupancyPanel *self,
                                                                    GPtrArray               *resources,
                                                                    const gchar             *arch,
                                                                    const gchar             *message);
guint                     inspector_occupancy_panel_get_n_kernels  (InspectorOccupancyPanel *self);
const InspectorOccupancy *inspector_occupancy_panel_get_result     (InspectorOccupancyPanel *self);
const gchar              *inspector_occupancy_panel_get_arch       (InspectorOccupancyPanel *self);
GtkSpinButton            *inspector_occupancy_panel_get_block_spin (InspectorOccupancyPanel *self);
gchar                    *inspector_occupancy_panel_get_summary    (InspectorOccupancyPanel *self);
gchar                    *inspector_occupancy_panel_dup_target_arch (InspectorOccupancyPanel *self);
void                      inspector_occupancy_panel_set_description (InspectorOccupancyPanel *self,
                                                                     const gchar             *text);
gchar                    *inspector_occupancy_panel_get_description (InspectorOccupancyPanel *self);
GtkWidget                *inspector_occupancy_panel_get_analyse_button (InspectorOccupancyPanel *self);
gchar                    *inspector_occupancy_panel_dup_kernel_subtitle (InspectorOccupancyPanel *self,
                                                                         guint                    i);

G_END_DECLS
